#!/usr/bin/env bash
# Session 36 call 1 (reconstructed from the session's log; it ran from .carry/ as call1.sh):
# the GPU tests and sanitizers with TLC_STMATRIX=1 TLC_LOW_WORD_DESCRIPTORS=1.
set -uo pipefail
cd "$(dirname "$0")"
[[ -f lib/libtlc.so.gz ]] && gunzip -f lib/libtlc.so.gz
export LD_LIBRARY_PATH=$PWD/lib PATH=/usr/local/cuda/bin:$PATH TLC_CACHE_DIR=$(mktemp -d)
export TLC_STMATRIX=1 TLC_LOW_WORD_DESCRIPTORS=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $OUT/gpu.txt
mkdir -p $OUT/sass
for f in lw/*.ptx; do n=$(basename $f .ptx)
  ptxas -arch=sm_90a $f -o /tmp/$n.cubin && cuobjdump -sass /tmp/$n.cubin > $OUT/sass/$n.sass; done
gzip $OUT/sass/*.sass; ls -la $OUT/sass
t0=$SECONDS
tests="MHA in the tuned configurations*,MHA in bf16*,MHA at the reference's shape*"
tests+=",MHA deterministic*,MHA at long lengths*,MHA backward with its dQ gemm first*,[gemm]"
timeout 230 ./bin/tl-gpu-tests -d yes "$tests" > $OUT/tests-main.log 2>&1
echo "exit $? after $((SECONDS-t0)) s" | tee -a $OUT/tests-main.log
grep -E "^[0-9.]+ s:|passed|failed|FAILED" $OUT/tests-main.log | tail -40
t1=$SECONDS
timeout 70 ./bin/tl-gpu-tests -d yes "MHA backward in FlashAttention-3*" > $OUT/tests-fa3.log 2>&1
echo "exit $? after $((SECONDS-t1)) s" | tee -a $OUT/tests-fa3.log
grep -cE "^with expansion|PASSED|passed" $OUT/tests-fa3.log; tail -3 $OUT/tests-fa3.log
filter="MHA in the tuned configurations*,MHA backward with its dQ gemm first*,gemm kernel: TMA*"
for tl in memcheck:100 racecheck:130 synccheck:60; do
  tool=${tl%%:*} lim=${tl##*:} t1=$SECONDS
  echo "--- $tool" | tee -a $OUT/sanitize.log
  timeout $lim compute-sanitizer --tool $tool ./bin/tl-gpu-tests -d yes "$filter" > $OUT/san-$tool.log 2>&1
  echo "exit $? after $((SECONDS-t1)) s" >> $OUT/san-$tool.log
  grep -E "^[0-9.]+ s:|SUMMARY|passed|failed|exit" $OUT/san-$tool.log | tee -a $OUT/sanitize.log
done
echo total $((SECONDS-t0))
