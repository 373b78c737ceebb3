#!/usr/bin/env bash
# Session 38, ncu calls: CAUSAL=0|1 bash .carry/call-ncu.sh [l2]
# ncu-stalls on our backward's main kernel and forward beside cuDNN's at issue 17's three S = 4096
# rows (one mask), then (with l2) ncu-l2-state: is the reference forward's queued gap inside the
# kernel under the memset's dirty L2, or outside it?
# Call 1: CAUSAL=0 bash .carry/call-ncu.sh l2
# Call 2: CAUSAL=1 bash .carry/call-ncu.sh > /dev/null 2>&1; t0=$SECONDS; TEST_JOBS=6
#   TEST_TIMEOUT_S=400 bash scripts/gpu-session.sh tests > $OUT/part-tests.log 2>&1; ...
set -uo pipefail
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $OUT/gpu.txt
t0=$SECONDS
NCU_CAUSAL=$CAUSAL NCU_STALL_SHAPES="4,16,4096,128 4,32,4096,64 4,16,4096,256" \
  NCU_STALL_VARIANTS="flash_bwd;flash_fwd" timeout 420 bash scripts/gpu-session.sh ncu-stalls \
  > $OUT/part-stalls.log 2>&1
echo "ncu-stalls causal=$CAUSAL exit $? after $((SECONDS-t0)) s" | tee -a $OUT/gpu.txt
if [[ ${1:-} == l2 ]]; then
  timeout $((560 - (SECONDS-t0))) bash scripts/gpu-session.sh ncu-l2-state > $OUT/part-l2.log 2>&1
  echo "ncu-l2-state exit $? after $((SECONDS-t0)) s" | tee -a $OUT/gpu.txt
fi
rm -f $OUT/metrics.txt
grep -E "^---|gpu__time_duration|smsp__inst_executed.sum |issue_active|lts__t_sector_hit" $OUT/*.log | head -80
