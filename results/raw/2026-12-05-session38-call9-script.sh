#!/usr/bin/env bash
# Session 38: ncu on the backward's main kernel, default and --deterministic (dQ summed in key-block
# order), at D = 128 and 256 (non-causal, S = 4096): stall reasons, scheduler statistics, stall
# samples per SASS line; what the deterministic row's 24-26% costs go to.
set -uo pipefail
cd "$(dirname "$0")"
[[ -f lib/libtlc.so.gz ]] && gunzip -f lib/libtlc.so.gz
export LD_LIBRARY_PATH=$PWD/lib PATH=/usr/local/cuda/bin:$PATH TLC_CACHE_DIR=$(mktemp -d)
r=$(mktemp -d)
m="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,smsp__inst_executed.sum"
m=$m,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
for shape in 4,16,4096,128 4,16,4096,256; do
  for flags in "" --deterministic; do
    name=${shape//,/_}${flags:+_det}
    timeout 80 ncu -f --clock-control none --kernel-id "::regex:^flash_bwd\$:1" \
      --section SchedulerStats --section SourceCounters --import-source no --metrics "$m" \
      -o $r/$name ./bin/tl-bench-gpu --causal=0 $flags $shape > $r/run-$name.log 2>&1
    ncu -i $r/$name.ncu-rep --page details > $r/details-$name.txt 2>&1
    ncu -i $r/$name.ncu-rep --page source --csv --print-source sass > $r/sass-$name.csv 2>&1
    echo "$name after $SECONDS s"
  done
done
rm -f $r/*.ncu-rep
tar czf $OUT/det-ncu.tgz -C $r .
grep -h "gpu__time_duration\|issue_active" $r/details-*.txt
