#!/usr/bin/env python3
"""Accuracy of tlc's attention against PyTorch SDPA's FlashAttention-2 backend, on the
very same inputs, both measured against an fp64 reference (on the GPU machine).

Usage: python3 accuracy_peer.py --tool bin/tl-attention-files [--shape B,H,S,D ...]
                                [--qk-scale 8] [--causal 0|1|both] [--seed 0]
For each shape it draws Q, K, V, dO (normal; Q and K times --qk-scale, which makes the
softmax nearly one-hot at 8), writes them for tl-attention-files, runs tlc (tuned
configuration), runs SDPA (flash backend) and an fp64 SDPA (math backend), and prints one
JSON line per peer: relative Frobenius error and max abs error of O, dQ, dK, dV.
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def attention(q, k, v, do, causal, backend):
    """q, k, v, do: [B, S, H, D]; returns O, dQ, dK, dV in the same layout."""
    q, k, v = (t.detach().transpose(1, 2).contiguous().requires_grad_() for t in (q, k, v))
    with sdpa_kernel([backend]):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    dq, dk, dv = torch.autograd.grad(o, (q, k, v), do.transpose(1, 2))
    return [t.transpose(1, 2) for t in (o.detach(), dq, dk, dv)]


def errors(peer, shape, causal, scale, results, reference):
    row = {"peer": peer, "B": shape[0], "H": shape[1], "S": shape[2], "D": shape[3],
           "causal": int(causal), "qk_scale": scale}
    for name, got, want in zip(("O", "dQ", "dK", "dV"), results, reference):
        diff = got.double() - want
        row[name + "_rel"] = float(diff.norm() / want.norm())
        row[name + "_max_abs"] = float(diff.abs().max())
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True, help="path of tl-attention-files")
    ap.add_argument("--shape", action="append", help="B,H,S,D (default: 4,16,1024,64 and 4,16,1024,128)")
    ap.add_argument("--qk-scale", type=float, default=8.0)
    ap.add_argument("--causal", default="both", choices=["0", "1", "both"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    causals = [False, True] if args.causal == "both" else [args.causal == "1"]
    for text in args.shape or ["4,16,1024,64", "4,16,1024,128"]:
        B, H, S, D = (int(x) for x in text.split(","))
        for causal in causals:
            torch.manual_seed(args.seed)
            q, k, v, do = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(4))
            q, k = (t * args.qk_scale for t in (q, k))
            reference = attention(*(t.double() for t in (q, k, v, do)), causal, SDPBackend.MATH)
            flash = attention(q, k, v, do, causal, SDPBackend.FLASH_ATTENTION)
            print(json.dumps(errors("sdpa-flash2", (B, H, S, D), causal, args.qk_scale, flash, reference)),
                  flush=True)
            with tempfile.TemporaryDirectory() as tmp:
                for name, t in zip(("Q", "K", "V", "dO"), (q, k, v, do)):
                    t.cpu().numpy().tofile(os.path.join(tmp, name + ".f16"))
                subprocess.run([args.tool, tmp, text, str(int(causal)), "tuned"], check=True,
                               stdout=subprocess.DEVNULL)
                ours = [torch.from_numpy(np.fromfile(os.path.join(tmp, name + ".f16"), dtype=np.float16)
                                         .reshape(B, S, H, D)).cuda() for name in ("O", "dQ", "dK", "dV")]
            print(json.dumps(errors("tlc", (B, H, S, D), causal, args.qk_scale, ours, reference)), flush=True)


if __name__ == "__main__":
    main()
