# Session 38, calls 3, 4, 5 and 8: commands given to the device machine directly (from the
# repository root, .carry carried after `bash scripts/carry.sh`).
# Call 3 (rows and the deterministic cost):
cd .carry && gunzip -f lib/libtlc.so.gz; export LD_LIBRARY_PATH=$PWD/lib PATH=/usr/local/cuda/bin:$PATH \
  TLC_CACHE_DIR=$(mktemp -d); s="4,16,4096,128 4,32,4096,64 4,16,4096,256 8,32,256,64 16,16,1024,128"
for r in 1 2; do ./bin/tl-bench-gpu $s >> $OUT/rows.jsonl 2>&1
  ./bin/tl-bench-gpu --deterministic $s >> $OUT/rows.jsonl 2>&1
  python3 sdpa_peer.py $(for x in $s; do echo --shape $x; done) >> $OUT/rows.jsonl 2>&1; done
# Call 4: timeout 300 bash scripts/gpu-session.sh ncu-opcodes
# Call 5: NCU_CAUSAL=1 NCU_OPCODE_SHAPES="4,32,4096,64 4,16,4096,128" bash scripts/gpu-session.sh ncu-opcodes
# Call 8 (grid order, causal, with the producer at D = 64), after the same set-up as call 3:
s="4,32,4096,64 4,16,4096,128 16,32,1024,64"; for r in 1 2; do for k in 0 1; do
  echo "{\"keys_fastest\": $k}" >> $OUT/kf.jsonl
  ./bin/tl-bench-gpu --causal=1 --bwd-keys-fastest=$k $s >> $OUT/kf.jsonl 2>&1; done; done
