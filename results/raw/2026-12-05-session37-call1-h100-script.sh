#!/usr/bin/env bash
# Session 37 call 1: the defaults as built (stmatrix, low-word descriptors, dQ first from S = 1024)
# on the key GPU tests; tl-bench-gpu new against old (TLC_STMATRIX=0 TLC_LOW_WORD_DESCRIPTORS=0
# --bwd-dq-first=0), twice alternating, beside sdpa_peer.py; ncu on the S = 4096 D = 64 causal
# backward (default, TLC_STMATRIX=0, both options off): shared-store bank conflicts, stalls.
set -uo pipefail
cd "$(dirname "$0")"
[[ -f lib/libtlc.so.gz ]] && gunzip -f lib/libtlc.so.gz
export LD_LIBRARY_PATH=$PWD/lib PATH=/usr/local/cuda/bin:$PATH TLC_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $OUT/gpu.txt
t0=$SECONDS
key="MHA in the tuned configurations*,MHA in bf16*,MHA at the reference's shape*"
key+=",MHA deterministic*,MHA backward with its dQ gemm first*"
timeout 120 ./bin/tl-gpu-tests -d yes "$key" > $OUT/tests-key.log 2>&1
echo "key tests exit $? after $((SECONDS-t0)) s" | tee -a $OUT/tests-key.log
grep -E "passed|failed|FAILED" $OUT/tests-key.log | tail -3
args=(4,16,4096,128 4,32,4096,64 4,16,4096,256 8,32,256,64)
round() {
  echo '{"defaults": "new"}' >> $OUT/bench.jsonl
  ./bin/tl-bench-gpu "${args[@]}" >> $OUT/bench.jsonl 2>&1
  echo '{"defaults": "old"}' >> $OUT/bench.jsonl
  TLC_STMATRIX=0 TLC_LOW_WORD_DESCRIPTORS=0 ./bin/tl-bench-gpu --bwd-dq-first=0 "${args[@]}" \
    >> $OUT/bench.jsonl 2>&1
  echo "round after $((SECONDS-t0)) s"
}
round
peer=(); for s in "${args[@]}"; do peer+=(--shape $s); done
python3 sdpa_peer.py "${peer[@]}" >> $OUT/bench.jsonl 2>&1
echo "peers after $((SECONDS-t0)) s"
round
sections=(--section SpeedOfLight --section WarpStateStats --section SchedulerStats
  --section MemoryWorkloadAnalysis_Tables
  --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum,gpu__time_duration.sum)
for v in "default:" "stmatrix0:TLC_STMATRIX=0" "both0:TLC_STMATRIX=0 TLC_LOW_WORD_DESCRIPTORS=0"; do
  name=${v%%:*} envs=${v#*:}
  echo "--- $name ($envs) flash_bwd 4,32,4096,64 causal" | tee -a $OUT/ncu.log
  env $envs timeout 90 ncu --clock-control none --kernel-id "::regex:^flash_bwd\$:1" "${sections[@]}" \
    ./bin/tl-bench-gpu --causal=1 4,32,4096,64 2>&1 | tee -a $OUT/ncu.log | grep -E "Duration|Bank|^\{" | head -8
  echo "ncu $name after $((SECONDS-t0)) s"
done
fs=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
  --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum)
echo "--- tlc flash_fwd 8,32,256,64" | tee -a $OUT/ncu-ref-fwd.log
timeout 60 ncu --clock-control none --kernel-id "::regex:^flash_fwd\$:1" "${fs[@]}" \
  ./bin/tl-bench-gpu --causal=0 8,32,256,64 2>&1 | grep -v '^{' >> $OUT/ncu-ref-fwd.log
echo "--- cuDNN forward 8,32,256,64" | tee -a $OUT/ncu-ref-fwd.log
timeout 60 ncu --clock-control none -k "regex:fprop|fwd" --launch-skip 3 --launch-count 1 "${fs[@]}" \
  python3 sdpa_peer.py --shape 8,32,256,64 --causal 0 --peer sdpa-cudnn 2>&1 | grep -v '^{' \
  >> $OUT/ncu-ref-fwd.log
grep -E "^---|Duration|Elapsed Cycles|Executed Ipc A|Grid Size|Block Size|dram__bytes" $OUT/ncu-ref-fwd.log
echo total $((SECONDS-t0))
