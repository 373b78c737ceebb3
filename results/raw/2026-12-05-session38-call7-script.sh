#!/usr/bin/env bash
# Session 38: the build with the D = 64 causal backward on the producer and its dQ tile built in:
# the tuned-configuration and dQ-first tests (which run tunedConfig's long configurations) on the
# GPU and under memcheck, racecheck and synccheck; the sweep for 70 s; the default once beside
# the old configuration's flags (--bwd-producer=0 --dq-tile=0).
set -uo pipefail
cd "$(dirname "$0")"
[[ -f lib/libtlc.so.gz ]] && gunzip -f lib/libtlc.so.gz
export LD_LIBRARY_PATH=$PWD/lib PATH=/usr/local/cuda/bin:$PATH TLC_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
t0=$SECONDS
f="MHA in the tuned configurations*,MHA backward with its dQ gemm first*"
timeout 120 ./bin/tl-gpu-tests -d yes "$f" > $OUT/tests.log 2>&1
echo "tests exit $? after $((SECONDS-t0)) s" | tee -a $OUT/gpu.txt
for tool in memcheck racecheck synccheck; do
  timeout 200 compute-sanitizer --tool $tool ./bin/tl-gpu-tests "$f" > $OUT/san-$tool.log 2>&1 &
done
TLC_SWEEP_COUNT=40 timeout 100 ./bin/tl-gpu-tests "MHA random shape sweep*" > $OUT/sweep.log 2>&1
echo "sweep exit $? after $((SECONDS-t0)) s" | tee -a $OUT/gpu.txt
wait
echo "sanitizers after $((SECONDS-t0)) s" | tee -a $OUT/gpu.txt
s=(4,32,4096,64 16,32,1024,64)
./bin/tl-bench-gpu --causal=1 "${s[@]}" > $OUT/bench.jsonl 2>&1
./bin/tl-bench-gpu --causal=1 --bwd-producer=0 --dq-tile=0 "${s[@]}" >> $OUT/bench.jsonl 2>&1
echo "total $((SECONDS-t0)) s" | tee -a $OUT/gpu.txt
tail -2 $OUT/tests.log; for t in memcheck racecheck synccheck; do tail -3 $OUT/san-$t.log; done
grep -E "^sweep.*(shapes|FAIL)|passed|failed" $OUT/sweep.log | tail -3
