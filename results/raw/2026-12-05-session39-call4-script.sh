#!/usr/bin/env bash
# Session 39, call 4: every kernel of cuDNN's SDPA backward at the reference shape under ncu
# (call 3's NVTX filter matched nothing): all kernels of a script that runs the forward once
# and the backward four times; the last backward's kernels are the ones to read. Then ours:
# the preprocess, main kernel and postprocess of one backward.
set -uo pipefail
source scripts/gpu-call-env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee "$out/gpu.txt"
cat > cudnn_bwd_once.py <<'PY'
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q, k, v = (torch.randn(8, 32, 256, 64, device="cuda", dtype=torch.float16, requires_grad=True)
           for _ in range(3))
do = torch.randn_like(q)
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    o = F.scaled_dot_product_attention(q, k, v)
    for _ in range(4):
        torch.cuda.synchronize()
        print("--- backward", flush=True)
        torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
    torch.cuda.synchronize()
PY
timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
  python3 cudnn_bwd_once.py > "$out/ncu-cudnn.log" 2>&1
for kernel in flash_bwd_prep flash_bwd flash_bwd_post; do
  echo "--- tlc $kernel" >> "$out/ncu-tlc.log"
  timeout 100 ncu --clock-control none --kernel-id "::regex:^$kernel\$:1" \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    ./bin/tl-bench-gpu --causal=0 8,32,256,64 2>&1 | grep -v '^{' >> "$out/ncu-tlc.log"
done
grep -E "^---|^  [A-Za-z_].*\(|gpu__time" "$out/ncu-cudnn.log" | tail -30
grep -E "^---|gpu__time" "$out/ncu-tlc.log"
