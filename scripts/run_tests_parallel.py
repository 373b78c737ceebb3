#!/usr/bin/env python3
"""Runs a Catch2 test binary's test cases in several processes at once, for the GPU machine,
where one device call has minutes and tl-gpu-tests spends most of its time compiling kernels
one after another (the JIT cache's writes are atomic, so the processes share it).

  run_tests_parallel.py [--jobs N] [--timings LOG ...] [--timeout S] [--wrap COMMAND]
                        --out DIR BINARY [FILTER]

It lists BINARY's test cases (those FILTER selects, Catch2's syntax), deals them to N jobs,
the longest first to the job with the least so far (longest-processing-time order) by the
durations in earlier logs (`-d yes` lines, "12.3 s: name"; a case no log names counts as the
median of those that do), and runs each job as `[COMMAND] BINARY -d yes -f DIR/job-I.txt`
with its output in DIR/job-I.log. A job past --timeout seconds is stopped. It prints, and
writes to DIR/summary.txt, each job's result and every test case that did not finish, and
exits 0 only if every job passed. The processes share the GPU, so the durations are for
planning, not for timing kernels. Exit 77 (the binary's "no GPU") is passed on as a skip.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

DURATION = re.compile(r"^([0-9]+\.[0-9]+) s: (.+)$")
SPECIAL = re.compile(r'([\\,\[\]*~"])')  # characters of Catch2's test-spec syntax


def listed(binary, test_filter):
    command = [binary, "--list-test-names-only"] + ([test_filter] if test_filter else [])
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode == 77:
        print(run.stdout.strip() or "skipped", flush=True)
        sys.exit(77)
    if run.returncode < 0 or (run.returncode > 0 and not run.stdout.strip()):
        sys.exit(f"{binary} --list-test-names-only failed ({run.returncode}): {run.stderr}")
    # Catch2 exits with the number of cases listed; the names are the non-empty lines.
    return [line for line in run.stdout.splitlines() if line.strip()]


def durations(logs):
    seconds = {}
    for log in logs:
        with open(log, errors="replace") as text:
            for line in text:
                match = DURATION.match(line.rstrip("\n"))
                if match:
                    name = match[2]
                    seconds[name] = max(seconds.get(name, 0.0), float(match[1]))
    return seconds


def deal(names, seconds, jobs):
    """Longest first, each to the job with the least time so far."""
    known = [seconds[n] for n in names if n in seconds]
    default = statistics.median(known) if known else 1.0
    weight = {n: seconds.get(n, default) for n in names}
    loads = [[0.0, []] for _ in range(max(1, min(jobs, len(names))))]
    for name in sorted(names, key=lambda n: -weight[n]):
        lightest = min(loads, key=lambda load: load[0])
        lightest[0] += weight[name]
        lightest[1].append(name)
    return loads


def finished(log, interrupted):
    """The cases the log gives a duration; of a job stopped midway, Catch2 also times the
    case the signal cut short (its last), which did not finish."""
    with open(log, errors="replace") as text:
        timed = [m[2] for m in (DURATION.match(line.rstrip("\n")) for line in text) if m]
    return set(timed[:-1] if interrupted else timed)


def outcome(log):
    with open(log, errors="replace") as text:
        lines = [line.strip() for line in text]
    for line in reversed(lines):
        if line.startswith("All tests passed") or line.startswith("test cases:"):
            return line
    return "(no Catch2 summary)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timings", nargs="*", default=[], help="earlier `-d yes` logs")
    parser.add_argument("--timeout", type=float, default=0, help="seconds a job may run")
    parser.add_argument("--wrap", default="", help="a command to run each job under")
    parser.add_argument("--out", required=True)
    parser.add_argument("binary")
    parser.add_argument("filter", nargs="?", default="")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs wants 1 or more")

    names = listed(args.binary, args.filter)
    if not names:
        sys.exit(f"{args.binary}: no test case matches {args.filter!r}")
    os.makedirs(args.out, exist_ok=True)
    plan = deal(names, durations(args.timings), args.jobs)
    started, processes = time.monotonic(), []
    for index, (planned, cases) in enumerate(plan):
        spec = os.path.join(args.out, f"job-{index}.txt")
        with open(spec, "w") as out:
            out.writelines(SPECIAL.sub(r"\\\1", name) + "\n" for name in cases)
        log = os.path.join(args.out, f"job-{index}.log")
        command = args.wrap.split() + [args.binary, "-d", "yes", "-f", spec]
        with open(log, "w") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        processes.append((index, planned, cases, log, process))

    lines, failed = [], False
    for index, planned, cases, log, process in processes:
        left, interrupted = None, False
        if args.timeout:
            left = max(0.0, args.timeout - (time.monotonic() - started))
        try:
            code = process.wait(timeout=left)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 15)  # the job and what it started (a sanitizer's target)
            try:
                code = process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                code = process.wait()
            code, interrupted = f"stopped after {args.timeout:.0f} s ({code})", True
        interrupted = interrupted or (isinstance(code, int) and code < 0)  # killed by a signal
        done = finished(log, interrupted)
        unfinished = [name for name in cases if name not in done]
        failed = failed or code != 0 or bool(unfinished)
        lines.append(f"job {index}: {len(cases)} cases, planned {planned:.0f} s, exit {code}: "
                     f"{outcome(log)}")
        lines += [f"  not finished: {name}" for name in unfinished]
    lines.append(f"{len(names)} cases in {len(processes)} jobs, "
                 f"{time.monotonic() - started:.0f} s: {'FAILED' if failed else 'passed'}")
    with open(os.path.join(args.out, "summary.txt"), "w") as out:
        out.write("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
