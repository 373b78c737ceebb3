#!/usr/bin/env bash
# Session 37 call 3: the L2 flush probe (flush_probe.py: cuDNN's forward after torch's zero_,
# after cudaMemsetAsync, unflushed) beside tl-bench-gpu at the reference shape (its queued times
# flush with cuMemsetD8Async), twice, alternating; racecheck on the tuned and dQ-first tests.
set -uo pipefail
cd "$(dirname "$0")"
[[ -f lib/libtlc.so.gz ]] && gunzip -f lib/libtlc.so.gz
export LD_LIBRARY_PATH=$PWD/lib PATH=/usr/local/cuda/bin:$PATH TLC_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
t0=$SECONDS
for r in 1 2; do
  ./bin/tl-bench-gpu 8,32,256,64 4,32,4096,64 >> $OUT/probe.jsonl 2>&1
  python3 flush_probe.py 8,32,256,64 4,32,4096,64 >> $OUT/probe.jsonl 2>&1
  python3 sdpa_peer.py --shape 8,32,256,64 --peer sdpa-cudnn >> $OUT/probe.jsonl 2>&1
  echo "round $r after $((SECONDS-t0)) s"
done
grep -v '"tlc-' $OUT/probe.jsonl | cut -c1-400
f="MHA in the tuned configurations*,MHA backward with its dQ gemm first*"
timeout 200 compute-sanitizer --tool racecheck ./bin/tl-gpu-tests "$f" > $OUT/san-racecheck.log 2>&1
echo "racecheck exit $? after $((SECONDS-t0)) s" | tee -a $OUT/san-racecheck.log
grep -E "SUMMARY|passed|failed" $OUT/san-racecheck.log | tail -2
echo total $((SECONDS-t0))
