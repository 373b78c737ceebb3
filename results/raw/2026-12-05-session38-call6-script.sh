#!/usr/bin/env bash
# Session 38 call 6: the D = 64 causal backward with the producer warpgroup and its dQ tile (which
# tunedConfig left out since session 21, when that kernel spilled 56 bytes; ptxas now reads 4)
# against tunedConfig's then (no producer, element dQ adds), twice alternating, beside cuDNN; the
# producer backward's test on the GPU; ncu on both main kernels at S = 4096.
set -uo pipefail
cd "$(dirname "$0")"
[[ -f lib/libtlc.so.gz ]] && gunzip -f lib/libtlc.so.gz
export LD_LIBRARY_PATH=$PWD/lib PATH=/usr/local/cuda/bin:$PATH TLC_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
t0=$SECONDS
s=(4,32,4096,64 16,32,1024,64 1,32,16384,64)
for r in 1 2; do
  echo '{"variant": "tunedConfig"}' >> $OUT/producer.jsonl
  ./bin/tl-bench-gpu --causal=1 "${s[@]}" >> $OUT/producer.jsonl 2>&1
  echo '{"variant": "--bwd-producer=1 --dq-tile=1"}' >> $OUT/producer.jsonl
  ./bin/tl-bench-gpu --causal=1 --bwd-producer=1 --dq-tile=1 "${s[@]}" >> $OUT/producer.jsonl 2>&1
done
python3 sdpa_peer.py --causal 1 $(printf -- "--shape %s " "${s[@]}") >> $OUT/producer.jsonl 2>&1
echo "bench after $((SECONDS-t0)) s" | tee -a $OUT/gpu.txt
timeout 90 ./bin/tl-gpu-tests -d yes "MHA backward with a producer warpgroup*" > $OUT/tests.log 2>&1
echo "test exit $? after $((SECONDS-t0)) s" | tee -a $OUT/gpu.txt
for flags in "" "--bwd-producer=1 --dq-tile=1"; do
  echo "--- flash_bwd $flags" >> $OUT/ncu.log
  timeout 60 ncu --clock-control none --kernel-id "::regex:^flash_bwd\$:1" --metrics \
    gpu__time_duration.sum,smsp__inst_executed.sum,lts__t_sectors_op_red.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
    ./bin/tl-bench-gpu --causal=1 $flags 4,32,4096,64 2>&1 | grep -v '^{' >> $OUT/ncu.log
done
echo "total $((SECONDS-t0)) s" | tee -a $OUT/gpu.txt
