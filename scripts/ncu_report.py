#!/usr/bin/env python3
"""Tables from what Nsight Compute printed on the GPU machine (gpu-session.sh's
ncu-stalls and ncu-opcodes parts), side by side, for results/:

  ncu_report.py stalls NCU-STALLS.LOG
      per kernel: time, instructions, issue-active and tensor-pipe shares,
      warps, and each stall reason per issued instruction
  ncu_report.py opcodes OURS.txt THEIRS.txt
      executed instructions per SASS opcode, ours beside theirs
      (`ncu -i R --page raw --print-metric-instances details
      --metrics sass__inst_executed_per_opcode`)
  ncu_report.py hot SASS.csv [N]
      the N SASS lines with the most stall samples (default 12), and the samples
      per opcode with its modifiers
      (`ncu -i R --page source --csv --print-source sass` of a report with the
      SourceCounters section)
"""
import collections
import csv
import re
import sys

STALLS = ["selected", "barrier", "long_scoreboard", "wait", "gmma", "short_scoreboard",
          "mio_throttle", "not_selected", "dispatch_stall", "math_pipe_throttle",
          "branch_resolving", "no_instruction"]


def stalls(path):
    blocks = open(path).read().split("\n--- ")
    table, reasons = [], list(STALLS)
    for block in blocks:
        name = block.split("\n")[0].strip("- ")
        if not name:
            continue
        row = {"name": name}
        stall = r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio"
        for m in re.finditer(stall + r"\s+inst\s+([\d.]+)", block):
            row[m[1]] = m[2]
            if m[1] not in reasons and float(m[2]) > 0:
                reasons.append(m[1])
        patterns = {
            "time": r"gpu__time_duration.sum\s+(\w+)\s+([\d.,]+)",
            "instructions": r"smsp__inst_executed.sum\s+inst\s+([\d,]+)",
            "issue %": r"smsp__issue_active.avg.pct_of_peak_sustained_active\s+%\s+([\d.]+)",
            "tensor %": r"sm__pipe_tensor\w*cycles_active\.avg\.pct_of_peak_sustained_active"
                        r"\s+%\s+([\d.]+)",
            "warps": r"Active Warps Per Scheduler\s+warp\s+([\d.]+)",
            "eligible": r"Eligible Warps Per Scheduler\s+warp\s+([\d.]+)",
        }
        for key, pattern in patterns.items():
            m = re.search(pattern, block)
            if m:
                row[key] = m[2] + " " + m[1] if key == "time" else m[1]
        if "selected" in row:  # a kernel's block: its stall metrics were printed
            table.append(row)
    if not table:
        sys.exit(f"{path}: no kernel with ncu's stall metrics (gpu-session.sh ncu-stalls' log)")
    keys = ["time", "instructions", "issue %", "tensor %", "warps", "eligible"] + reasons
    print("| | " + " | ".join(r["name"] for r in table) + " |")
    print("|---" * (len(table) + 1) + "|")
    for key in keys:
        print(f"| {key} | " + " | ".join(r.get(key, "") for r in table) + " |")


def opcode_counts(path):
    text = open(path).read()
    start = text.find("sass__inst_executed_per_opcode")
    end = text.find(")", start)
    body = re.sub(r"\s+", " ", text[start:end]) if start >= 0 and end >= 0 else ""
    counts = {m[1]: int(m[2].replace(",", ""))
              for m in re.finditer(r"([A-Z0-9_.]+): ([\d,]+)", body)}
    if not counts:
        sys.exit(f"{path}: no named sass__inst_executed_per_opcode counts (ncu -i R --page raw "
                 "--print-metric-instances details)")
    return counts


def opcodes(ours_path, theirs_path, rows=30):
    ours, theirs = opcode_counts(ours_path), opcode_counts(theirs_path)
    print(f"| opcode | ours (M) | theirs (M) | difference (M) |\n|---|---|---|---|")
    print(f"| all | {sum(ours.values()) / 1e6:.1f} | {sum(theirs.values()) / 1e6:.1f} | "
          f"{(sum(ours.values()) - sum(theirs.values())) / 1e6:+.1f} |")
    order = sorted(set(ours) | set(theirs), key=lambda o: -(ours.get(o, 0) + theirs.get(o, 0)))
    for op in order[:rows]:
        a, b = ours.get(op, 0), theirs.get(op, 0)
        print(f"| {op} | {a / 1e6:.1f} | {b / 1e6:.1f} | {(a - b) / 1e6:+.1f} |")


def hot(path, count=12):
    rows = list(csv.reader(open(path)))
    header = next((r for r in rows if "Source" in r and "Address" in r), None)
    if header is None or "Warp Stall Sampling (All Samples)" not in header:
        sys.exit(f"{path}: no SASS source page with stall samples (ncu -i R --page source --csv "
                 "--print-source sass, SourceCounters collected)")
    lines = []
    for r in rows[rows.index(header) + 1:]:
        entry = dict(zip(header, r))
        try:
            samples = int(entry["Warp Stall Sampling (All Samples)"].replace(",", "") or 0)
        except (KeyError, ValueError):
            continue
        lines.append((entry["Source"].strip(), samples))
    total = sum(s for _, s in lines) or 1
    order = sorted(range(len(lines)), key=lambda i: -lines[i][1])[:count]
    for i in sorted(order):
        print(f"{i:5d} {lines[i][1] * 100 / total:5.2f}%  {lines[i][0][:90]}")
    by_opcode = collections.Counter()
    for source, samples in lines:
        words = source.split()
        if words:
            predicated = words[0].startswith("@") and len(words) > 1
            by_opcode[words[1] if predicated else words[0]] += samples
    print(" ".join(f"{op}:{s * 100 / total:.1f}%" for op, s in by_opcode.most_common(16)))


if __name__ == "__main__":
    arguments = {"stalls": (1, 1), "opcodes": (2, 2), "hot": (1, 2)}
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    given = len(sys.argv) - 2
    if mode not in arguments or not arguments[mode][0] <= given <= arguments[mode][1] or (
            mode == "hot" and given == 2 and not sys.argv[3].isdigit()):
        sys.exit(__doc__)
    if sys.argv[1] == "stalls":
        stalls(sys.argv[2])
    elif sys.argv[1] == "opcodes":
        opcodes(sys.argv[2], sys.argv[3])
    else:
        hot(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 12)
