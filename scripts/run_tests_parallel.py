#!/usr/bin/env python3
"""Runs a Catch2 test binary's test cases in several processes at once, for the GPU machine,
where one device call has minutes and tl-gpu-tests spends most of its time compiling kernels
one after another (the JIT cache's writes are atomic, so the processes share it).

  run_tests_parallel.py [--jobs N] [--timings LOG]... [--timeout S] [--wrap COMMAND]
                        --out DIR BINARY [FILTER]

It lists BINARY's test cases (those FILTER selects, Catch2's syntax), deals them to N jobs,
the longest first to the job with the least so far (longest-processing-time order) by the
durations in earlier logs (`-d yes` lines, "12.3 s: name", of cases that completed; a case no
log times counts as the median of those that are), and runs each job as
`[COMMAND] BINARY -d yes -f DIR/job-I.txt` with its output in DIR/job-I.log. After --timeout
seconds (0: no limit) the jobs still running are stopped, as they are when the runner itself
gets SIGTERM or SIGINT. It prints, and writes to DIR/summary.txt, each job's result and every
test case that did not complete (never reached, or cut short by a signal or a crash), and exits
0 only if every job exited 0 and every case completed. The processes share the GPU: the
durations are for planning, not for timing kernels. A binary that says "SKIPPED:" when asked
for its list (tl-gpu-tests without a GPU) makes the runner exit 77, a skip for ctest.
"""
import argparse
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time

DURATION = re.compile(r"^([0-9]+\.[0-9]+) s: (.+)$")
FATAL = "due to a fatal error condition"  # Catch2's line for a case a signal cut short
SPECIAL = re.compile(r'([\\,\[\]*~"])')  # characters of Catch2's test-spec syntax


class Stopped(Exception):
    """SIGTERM or SIGINT reached the runner."""


def on_signal(number, frame):
    raise Stopped(signal.Signals(number).name)


def listed(binary, test_filter):
    command = [binary, "--list-test-names-only"] + ([test_filter] if test_filter else [])
    try:
        run = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        sys.exit(f"{binary}: {error}")
    if run.stdout.startswith("SKIPPED:"):
        print(run.stdout.strip(), flush=True)
        sys.exit(77)
    # Catch2 exits with the number of cases it listed (mod 256), the names one a line.
    names = [line for line in run.stdout.splitlines() if line.strip()]
    if run.returncode != len(names) % 256:
        sys.exit(f"{binary} --list-test-names-only failed ({run.returncode}): {run.stderr}")
    return names


def timed_cases(log):
    """(name, seconds, completed) for each case the log times, in order: Catch2 times a case
    a signal cut short too, after a line saying so."""
    cases, cut = [], False
    with open(log, errors="replace") as text:
        for line in text:
            cut = cut or FATAL in line
            match = DURATION.match(line.rstrip("\n"))
            if match:
                cases.append((match[2], float(match[1]), not cut))
                cut = False
    return cases


def durations(logs):
    seconds = {}
    for log in logs:
        for name, took, completed in timed_cases(log):
            if completed:
                seconds[name] = max(seconds.get(name, 0.0), took)
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


def outcome(log):
    with open(log, errors="replace") as text:
        lines = [line.strip() for line in text]
    for line in reversed(lines):
        if line.startswith("All tests passed") or line.startswith("test cases:"):
            return line
    return "(no Catch2 summary)"


def stop(process):
    """Stops a job and what it started (a sanitizer's target): SIGTERM, then SIGKILL."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timings", action="append", default=[],
                        help="an earlier `-d yes` log (repeat for more)")
    parser.add_argument("--timeout", type=float, default=0, help="seconds (0: no limit)")
    parser.add_argument("--wrap", default="", help="a command to run each job under")
    parser.add_argument("--out", required=True)
    parser.add_argument("binary")
    parser.add_argument("filter", nargs="?", default="")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs wants 1 or more")
    if args.timeout < 0:
        parser.error("--timeout wants 0 (no limit) or more seconds")
    for log in args.timings:
        if not os.path.isfile(log):
            parser.error(f"--timings {log}: no such file")

    names = listed(args.binary, args.filter)
    if not names:
        sys.exit(f"{args.binary}: no test case matches {args.filter!r}")
    if any(name.startswith("#") for name in names):  # -f would read it as a comment
        sys.exit(f"{args.binary}: a test case's name starts with '#': -f cannot name it")
    os.makedirs(args.out, exist_ok=True)
    plan = deal(names, durations(args.timings), args.jobs)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    started, jobs, stopped = time.monotonic(), [], ""
    try:
        for index, (planned, cases) in enumerate(plan):
            spec = os.path.join(args.out, f"job-{index}.txt")
            with open(spec, "w") as out:
                out.writelines(SPECIAL.sub(r"\\\1", name) + "\n" for name in cases)
            log = os.path.join(args.out, f"job-{index}.log")
            command = shlex.split(args.wrap) + [args.binary, "-d", "yes", "-f", spec]
            with open(log, "w") as out:
                process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                           start_new_session=True)
            jobs.append((index, planned, cases, log, process))
        for *_, process in jobs:
            left = None
            if args.timeout:
                left = max(0.0, args.timeout - (time.monotonic() - started))
            try:
                process.wait(timeout=left)
            except subprocess.TimeoutExpired:
                stopped = f"the jobs still running stopped after {args.timeout:.0f} s"
                break
    except Stopped as signal_name:
        stopped = f"the runner got {signal_name}: the jobs still running stopped"
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for *_, process in jobs:
        stop(process)

    lines, failed = [], bool(stopped) or len(jobs) < len(plan)
    for index, planned, cases, log, process in jobs:
        completed = {name for name, _, done in timed_cases(log) if done}
        unfinished = [name for name in cases if name not in completed]
        failed = failed or process.returncode != 0 or bool(unfinished)
        lines.append(f"job {index}: {len(cases)} cases, planned {planned:.0f} s, "
                     f"exit {process.returncode}: {outcome(log)}")
        lines += [f"  not completed: {name}" for name in unfinished]
    if stopped:
        lines.append(stopped)
    lines.append(f"{len(names)} cases in {len(plan)} jobs, "
                 f"{time.monotonic() - started:.0f} s: {'FAILED' if failed else 'passed'}")
    with open(os.path.join(args.out, "summary.txt"), "w") as out:
        out.write("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
