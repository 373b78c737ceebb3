#!/usr/bin/env python3
"""Session 37: does the way the L2 is flushed change a kernel's queued time? cuDNN's SDPA forward
(and a plain copy of the same bytes) timed with CUDA events after each of: torch's zero_ of a
256 MB buffer (triton.testing.do_bench's flush), cudaMemsetAsync of it (tl's timeQueuedColdL2 uses
cuMemsetD8Async), and no flush. Median of 200, microseconds."""
import json, sys
import torch, cupy
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

def timed(fn, flush, reps=200):
    for _ in range(25):
        flush(); fn()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for s, e in pairs:
        flush(); s.record(); fn(); e.record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) for s, e in pairs)
    return round(t[len(t) // 2] * 1000, 2)

buf = torch.empty(256_000_000, dtype=torch.int8, device="cuda")
stream = torch.cuda.current_stream().cuda_stream
flushes = {
    "zero_": lambda: buf.zero_(),
    "memset8": lambda: cupy.cuda.runtime.memsetAsync(buf.data_ptr(), 0, buf.numel(), stream),
    "none": lambda: None,
}
for shape in sys.argv[1:] or ["8,32,256,64"]:
    B, H, S, D = (int(x) for x in shape.split(","))
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
    src = torch.randn(4 * B * H * S * D, device="cuda", dtype=torch.float16)
    dst = torch.empty_like(src)
    for causal in (False, True):
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            row = {"shape": shape, "causal": int(causal)}
            for name, flush in flushes.items():
                row["cudnn_fwd_us_" + name] = timed(fwd, flush)
        if not causal:
            for name, flush in flushes.items():
                row["copy_us_" + name] = timed(lambda: dst.copy_(src), flush)
        print(json.dumps(row), flush=True)
