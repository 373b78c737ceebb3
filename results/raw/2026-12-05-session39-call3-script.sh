#!/usr/bin/env bash
# Session 39, call 3: what the reference shape's backward spends outside its main kernel. ncu
# (SpeedOfLight, MemoryWorkloadAnalysis, LaunchStats) on our preprocess and postprocess at
# 8,32,256,64 non-causal, then on every kernel of cuDNN's backward there (its 4th call), and
# nsys-free launch gaps: tl-bench-gpu's bwd_parts_ms beside bwd_ms_queued.
set -uo pipefail
source scripts/gpu-call-env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee "$out/gpu.txt"
t0=$SECONDS
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum)
for kernel in flash_bwd_prep flash_bwd_post; do
  echo "--- tlc $kernel" >> "$out/ncu.log"
  timeout 120 ncu --clock-control none --kernel-id "::regex:^$kernel\$:1" "${sections[@]}" \
    ./bin/tl-bench-gpu --causal=0 8,32,256,64 2>&1 | grep -v '^{' >> "$out/ncu.log"
done
echo "ours after $((SECONDS - t0)) s" | tee -a "$out/gpu.txt"
echo "--- cuDNN backward, every kernel of one call (NVTX range bwd)" >> "$out/ncu.log"
cat > cudnn_bwd_once.py <<'PY'
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q, k, v = (torch.randn(8, 32, 256, 64, device="cuda", dtype=torch.float16, requires_grad=True)
           for _ in range(3))
do = torch.randn_like(q)
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    o = F.scaled_dot_product_attention(q, k, v)
    for _ in range(3):
        torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("bwd")
    torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
PY
timeout 200 ncu --clock-control none --nvtx --nvtx-include "bwd/" \
  --section SpeedOfLight --section LaunchStats \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum python3 cudnn_bwd_once.py \
  >> "$out/ncu.log" 2>&1
echo "cuDNN after $((SECONDS - t0)) s" | tee -a "$out/gpu.txt"
for round in 1 2; do
  ./bin/tl-bench-gpu 8,32,256,64 >> "$out/bench.jsonl" 2>&1
done
python3 sdpa_peer.py --shape 8,32,256,64 >> "$out/bench.jsonl" 2>&1
echo "total $((SECONDS - t0)) s" | tee -a "$out/gpu.txt"
grep -E "^---|^  [a-z_]+.*\(|Duration|DRAM Through|Memory Through|dram__bytes|sectors|requests" \
  "$out/ncu.log" | head -120
