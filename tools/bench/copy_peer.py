#!/usr/bin/env python3
"""The copy bandwidth torch measures on the GPU machine (b.copy_(a), a device-to-device copy).

Usage (on the GPU machine): python3 copy_peer.py --shape M,N [--shape ...] [--dtype f16|bf16]
Prints one JSON object per shape:
  {"peer": "torch-copy", "M":.., "N":.., "dtype": "f16", "ms":.., "gbps":..}
gbps counts the bytes read and written (2 * M * N * element size) over the median of CUDA-event
timings (triton.testing.do_bench). Run it in the same device call as tl-bench-copy.
"""
import argparse
import json

import torch
import triton


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", action="append", required=True, help="M,N")
    ap.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    args = ap.parse_args()
    dtype = torch.float16 if args.dtype == "f16" else torch.bfloat16
    for shape in args.shape:
        M, N = (int(x) for x in shape.split(","))
        a = torch.randn(M, N, device="cuda", dtype=dtype)
        b = torch.empty_like(a)
        ms = triton.testing.do_bench(lambda: b.copy_(a), warmup=25, rep=100, return_mode="median")
        print(json.dumps({"peer": "torch-copy", "M": M, "N": N, "dtype": args.dtype,
                          "ms": round(ms, 5), "gbps": round(2 * a.numel() * a.element_size() / ms * 1e-6, 1)}),
              flush=True)


if __name__ == "__main__":
    main()
