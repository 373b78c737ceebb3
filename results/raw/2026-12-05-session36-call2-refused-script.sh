#!/usr/bin/env bash
# Session 36, the refused calls (run from .carry/, with lw/*.ptx beside it: PTX of the D = 64, 128
# and 256 backwards written by `tl-mha --ptx sm_90a` with TLC_LOW_WORD_DESCRIPTORS=0|1, not kept):
# the GPU tests with the new defaults (stmatrix, low-word descriptors, dQ first),
# then tl-bench-gpu new against old (TLC_STMATRIX=0 TLC_LOW_WORD_DESCRIPTORS=0
# --bwd-dq-first=0), alternating, and the peers; then the sweep and memcheck, time permitting.
set -uo pipefail
cd "$(dirname "$0")"
[[ -f lib/libtlc.so.gz ]] && gunzip -f lib/libtlc.so.gz
export LD_LIBRARY_PATH=$PWD/lib PATH=/usr/local/cuda/bin:$PATH TLC_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $OUT/gpu.txt
t0=$SECONDS
mkdir -p /tmp/sass
for f in lw/*.ptx; do n=$(basename $f .ptx)
  ptxas -arch=sm_90a $f -o /tmp/$n.cubin && cuobjdump -sass /tmp/$n.cubin > /tmp/sass/$n.sass; done
tar czf $OUT/sass.tgz -C /tmp/sass .
echo "sass after $((SECONDS-t0)) s"
key="MHA in the tuned configurations*,MHA in bf16*,MHA at the reference's shape*"
key+=",MHA deterministic*,MHA backward with its dQ gemm first*"
timeout 110 ./bin/tl-gpu-tests -d yes "$key" > $OUT/tests-key.log 2>&1
echo "key tests exit $? after $((SECONDS-t0)) s" | tee -a $OUT/tests-key.log
grep -E "passed|failed|FAILED" $OUT/tests-key.log | tail -3
args=(4,16,4096,128 4,32,4096,64 4,16,4096,256 8,32,256,64)
round() { # $1: 1 adds D = 64 with the low word off
  echo '{"defaults": "new"}' >> $OUT/bench.jsonl
  ./bin/tl-bench-gpu "${args[@]}" >> $OUT/bench.jsonl 2>&1
  echo '{"defaults": "old"}' >> $OUT/bench.jsonl
  TLC_STMATRIX=0 TLC_LOW_WORD_DESCRIPTORS=0 ./bin/tl-bench-gpu --bwd-dq-first=0 "${args[@]}" \
    >> $OUT/bench.jsonl 2>&1
  if [[ $1 == 1 ]]; then
    echo '{"defaults": "new, low word off"}' >> $OUT/bench.jsonl
    TLC_LOW_WORD_DESCRIPTORS=0 ./bin/tl-bench-gpu 4,32,4096,64 >> $OUT/bench.jsonl 2>&1
  fi
  echo "round after $((SECONDS-t0)) s"
}
round 1
peer=(); for s in "${args[@]}"; do peer+=(--shape $s); done
python3 sdpa_peer.py "${peer[@]}" >> $OUT/bench.jsonl 2>&1
echo "peers after $((SECONDS-t0)) s"
round 0
rest="~[sweep]~[gemm]~MHA backward in FlashAttention-3*~MHA in the tuned configurations*~MHA in bf16*"
rest+="~MHA at the reference's shape*~MHA deterministic*~MHA backward with its dQ gemm first*"
timeout 60 ./bin/tl-gpu-tests -d yes "$rest" > $OUT/tests-rest.log 2>&1
echo "other tests exit $? after $((SECONDS-t0)) s" | tee -a $OUT/tests-rest.log
grep -E "passed|failed|FAILED" $OUT/tests-rest.log | tail -3
TLC_SWEEP_COUNT=20 timeout 30 ./bin/tl-gpu-tests "[sweep]" > $OUT/sweep.log 2>&1
echo "sweep exit $? after $((SECONDS-t0)) s" | tee -a $OUT/sweep.log
grep -E "^sweep.*(shapes|FAIL)|passed|failed" $OUT/sweep.log | tail -3
for tool in memcheck racecheck; do
  timeout 30 compute-sanitizer --tool $tool ./bin/tl-gpu-tests "MHA in the tuned configurations*" \
    > $OUT/san-$tool.log 2>&1
  echo "$tool exit $? after $((SECONDS-t0)) s" | tee -a $OUT/san-$tool.log
  grep -E "SUMMARY|passed|failed" $OUT/san-$tool.log | tail -3
done
