#!/usr/bin/env python3
"""Joins tl-bench-gpu's and sdpa_peer.py's JSON lines (one file or stdin)
into the markdown table of results/: our TFLOP/s and latency, the peers', and
the ratios. Where tl-bench-gpu printed fwd_ms_queued and bwd_ms_queued (timed
as the peers are: cold L2, the backward's kernels queued back to back), the
table's tlc figures and ratios come from those. Usage: python3
tools/bench/table.py bench.jsonl"""
import json
import sys

rows = {}
for line in open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    d = json.loads(line)
    key = (d["B"], d["H"], d["S"], d["D"], d["causal"])
    for part in ("fwd", "bwd"):
        if f"{part}_ms_queued" in d:  # the peers' method: rescale TFLOP/s to it
            d[f"{part}_tflops"] *= d[f"{part}_ms"] / d[f"{part}_ms_queued"]
            d[f"{part}_ms"] = d[f"{part}_ms_queued"]
    rows.setdefault(key, {})[d["peer"]] = d

print("| B | H | S | D | causal | tlc fwd TFLOP/s (ms) | tlc bwd TFLOP/s (ms) "
      "| FA2 fwd / bwd | cuDNN fwd / bwd | tlc/FA2 fwd, bwd | tlc/cuDNN fwd, bwd |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for key, peers in rows.items():
    t, fa, cu = peers.get("tlc"), peers.get("sdpa-flash2"), peers.get("sdpa-cudnn")
    if not t or "error" in t:
        continue
    def ratio(p, k):
        return f"{t[k] / p[k]:.2f}" if p and p.get(k) else "-"
    def pair(p):
        return f"{p['fwd_tflops']:.0f} / {p['bwd_tflops']:.0f}" if p else "-"
    print(f"| {' | '.join(str(k) for k in key)} "
          f"| {t['fwd_tflops']:.1f} ({t['fwd_ms']:.3f}) | {t['bwd_tflops']:.1f} ({t['bwd_ms']:.3f}) "
          f"| {pair(fa)} | {pair(cu)} "
          f"| {ratio(fa, 'fwd_tflops')}, {ratio(fa, 'bwd_tflops')} "
          f"| {ratio(cu, 'fwd_tflops')}, {ratio(cu, 'bwd_tflops')} |")
