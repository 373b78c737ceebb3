#!/usr/bin/env bash
# Session 39, call 2: issue 17's rows in one call, twice (tl-bench-gpu, tl-bench-gpu
# --deterministic, then sdpa_peer.py, each round), then ncu-stalls (our backward's main
# kernel and forward beside cuDNN's bprop and fprop) at the two rows furthest from their
# targets on this machine, 4,32,4096,64 and 8,32,256,64, non-causal. From the repository
# root after `bash scripts/carry.sh`.
set -uo pipefail
root=$PWD
source scripts/gpu-call-env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee "$out/gpu.txt"
t0=$SECONDS
s=(4,16,4096,128 4,32,4096,64 4,16,4096,256 8,32,256,64 16,16,1024,128)
args=()
for x in "${s[@]}"; do args+=(--shape "$x"); done
for round in 1 2; do
  echo "{\"round\": $round, \"deterministic\": 0}" >> "$out/rows.jsonl"
  ./bin/tl-bench-gpu "${s[@]}" >> "$out/rows.jsonl" 2>&1
  echo "{\"round\": $round, \"deterministic\": 1}" >> "$out/rows.jsonl"
  ./bin/tl-bench-gpu --deterministic "${s[@]}" >> "$out/rows.jsonl" 2>&1
  echo "{\"round\": $round, \"peers\": 1}" >> "$out/rows.jsonl"
  python3 sdpa_peer.py "${args[@]}" >> "$out/rows.jsonl" 2>&1
  echo "round $round after $((SECONDS - t0)) s" | tee -a "$out/gpu.txt"
done
cd "$root" || exit 2
NCU_CAUSAL=0 NCU_STALL_SHAPES="4,32,4096,64 8,32,256,64" timeout $((560 - SECONDS + t0)) \
  bash scripts/gpu-session.sh ncu-stalls > "$out/part-stalls.log" 2>&1
echo "ncu-stalls exit $? after $((SECONDS - t0)) s" | tee -a "$out/gpu.txt"
rm -f "$out/metrics.txt"
