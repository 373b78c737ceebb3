#!/usr/bin/env python3
"""Drives tl-attention-files on a tiny problem (B=1, H=2, S=5, D=64, causal) with inputs
written here, and checks its O and lse against attention computed here in plain Python."""
import math
import os
import random
import struct
import subprocess
import sys

tool, work = sys.argv[1], sys.argv[2]
B, H, S, D = 1, 2, 5, 64
os.makedirs(work, exist_ok=True)
rng = random.Random(7)
tensors = {}
for name in ("Q", "K", "V", "dO"):
    values = [rng.gauss(0, 1) for _ in range(B * S * H * D)]
    data = struct.pack(f"<{len(values)}e", *values)
    tensors[name] = struct.unpack(f"<{len(values)}e", data)  # as rounded to f16
    with open(os.path.join(work, name + ".f16"), "wb") as f:
        f.write(data)
subprocess.run([tool, work, f"{B},{H},{S},{D}", "1"], check=True)


def read(name, fmt, count):
    with open(os.path.join(work, name), "rb") as f:
        data = f.read()
    assert len(data) == struct.calcsize(f"<{count}{fmt}"), (name, len(data))
    return struct.unpack(f"<{count}{fmt}", data)


n = B * S * H * D
O, lse = read("O.f16", "e", n), read("lse.f32", "f", B * H * S)
for name in ("dQ.f16", "dK.f16", "dV.f16"):
    assert all(math.isfinite(x) for x in read(name, "e", n)), name
at = lambda s, h, d: (s * H + h) * D + d
worst = 0.0
for h in range(H):
    for i in range(S):
        scores = [sum(tensors["Q"][at(i, h, d)] * tensors["K"][at(j, h, d)] for d in range(D)) / math.sqrt(D)
                  for j in range(i + 1)]
        m = max(scores)
        weights = [math.exp(s - m) for s in scores]
        total = sum(weights)
        worst = max(worst, abs(lse[h * S + i] - (math.log(total) + m) / math.log(2)))
        for d in range(D):
            o = sum(w * tensors["V"][at(j, h, d)] for j, w in enumerate(weights)) / total
            worst = max(worst, abs(O[at(i, h, d)] - o))
print(f"attention files: max abs error {worst:.2e}")
sys.exit(0 if worst < 1e-2 else 1)
