#!/usr/bin/env bash
# Session 37 call 2: with the defaults as built, every GPU test but the key ones (call 1) and the
# sweep, the seeded random sweep, memcheck/racecheck/synccheck on the tuned and dQ-first tests.
set -uo pipefail
cd "$(dirname "$0")"
[[ -f lib/libtlc.so.gz ]] && gunzip -f lib/libtlc.so.gz
export LD_LIBRARY_PATH=$PWD/lib PATH=/usr/local/cuda/bin:$PATH TLC_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
t0=$SECONDS
rest="~[sweep]~MHA in the tuned configurations*~MHA in bf16*"
rest+="~MHA at the reference's shape*~MHA deterministic*~MHA backward with its dQ gemm first*"
timeout 240 ./bin/tl-gpu-tests -d yes "$rest" > $OUT/tests-rest.log 2>&1
echo "other tests exit $? after $((SECONDS-t0)) s" | tee -a $OUT/tests-rest.log
grep -E "passed|failed|FAILED" $OUT/tests-rest.log | tail -3
TLC_SWEEP_COUNT=60 timeout 80 ./bin/tl-gpu-tests "[sweep]" > $OUT/sweep.log 2>&1
echo "sweep exit $? after $((SECONDS-t0)) s" | tee -a $OUT/sweep.log
grep -E "^sweep.*(shapes|FAIL)|passed|failed" $OUT/sweep.log | tail -3
f="MHA in the tuned configurations*,MHA backward with its dQ gemm first*,MHA at the reference's shape*"
for tl in memcheck:70 racecheck:80 synccheck:50; do
  tool=${tl%%:*} lim=${tl##*:}; t1=$SECONDS
  timeout $lim compute-sanitizer --tool $tool ./bin/tl-gpu-tests "$f" > $OUT/san-$tool.log 2>&1
  echo "$tool exit $? after $((SECONDS-t1)) s" | tee -a $OUT/san-$tool.log
  grep -E "SUMMARY|passed|failed" $OUT/san-$tool.log | tail -2
done
echo total $((SECONDS-t0))
