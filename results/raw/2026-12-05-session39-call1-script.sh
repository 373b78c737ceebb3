#!/usr/bin/env bash
# Session 39, call 1: the early tile hand-back (TLC_EARLY_TILE_HAND_BACK=1, off by default) on
# the GPU for the first time: the deterministic, producer, dQ-first and long-length tests with
# it; tl-bench-gpu --deterministic with it =0 and =1 (twice each, alternating), the default
# (non-deterministic) once, the peers; then memcheck, racecheck and synccheck on those tests
# (not the long lengths) with it. Run from the repository root after `bash scripts/carry.sh`.
set -uo pipefail
source scripts/gpu-call-env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee "$out/gpu.txt"
t0=$SECONDS
f="in_turn*,MHA backward in deterministic*,MHA backward with a producer warpgroup*"
f="$f,MHA deterministic at short lengths*,MHA backward with its dQ gemm first*"
TLC_EARLY_TILE_HAND_BACK=1 timeout 200 ./bin/tl-gpu-tests -d yes "$f,MHA at long lengths*" \
  > "$out/tests.log" 2>&1
echo "tests exit $? after $((SECONDS - t0)) s" | tee -a "$out/gpu.txt"
s=(4,16,4096,128 4,32,4096,64 4,16,4096,256 8,32,256,64 16,16,1024,128)
for v in 0 1 0 1; do
  echo "{\"TLC_EARLY_TILE_HAND_BACK\": $v}" >> "$out/bench.jsonl"
  TLC_EARLY_TILE_HAND_BACK=$v ./bin/tl-bench-gpu --deterministic "${s[@]}" >> "$out/bench.jsonl" 2>&1
done
echo '{"default": 1}' >> "$out/bench.jsonl"
./bin/tl-bench-gpu "${s[@]}" >> "$out/bench.jsonl" 2>&1
args=()
for x in "${s[@]}"; do args+=(--shape "$x"); done
python3 sdpa_peer.py "${args[@]}" >> "$out/bench.jsonl" 2>&1
echo "bench after $((SECONDS - t0)) s" | tee -a "$out/gpu.txt"
for tool in memcheck racecheck synccheck; do
  TLC_EARLY_TILE_HAND_BACK=1 timeout 240 compute-sanitizer --tool $tool ./bin/tl-gpu-tests "$f" \
    > "$out/san-$tool.log" 2>&1 &
done
wait
echo "sanitizers after $((SECONDS - t0)) s" | tee -a "$out/gpu.txt"
tail -3 "$out/tests.log"
for t in memcheck racecheck synccheck; do tail -3 "$out/san-$t.log"; done
