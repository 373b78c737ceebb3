#!/usr/bin/env bash
# scripts/run_tests_parallel.py on the CPU test binary: every listed case runs exactly once
# (names with commas included: Catch2's escapes); a job past --timeout, and the jobs of a runner
# that gets SIGTERM, are stopped and the case each cut short is named; a filter that matches
# nothing is an error.
#   run_tests_parallel_check.sh PYTHON SCRIPT TL-UNIT-TESTS
set -uo pipefail
python=$1 script=$2 binary=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

filter="[expr],[misuse]"
"$python" "$script" --jobs 3 --out "$out/ok" "$binary" "$filter" || fail "a passing run exited $?"
"$binary" --list-test-names-only "$filter" | grep . | sort > "$out/listed"
sed -nE 's/^[0-9]+\.[0-9]+ s: //p' "$out"/ok/job-*.log | sort > "$out/ran"
cmp -s "$out/listed" "$out/ran" || fail "the cases run are not the cases listed, once each"
grep -q "passed$" "$out/ok/summary.txt" || fail "no 'passed' in the summary"

# The in_turn case waits ten seconds for a turn that never comes.
slow="in_turn: turns out of launch order*"
"$python" "$script" --jobs 1 --timeout 2 --out "$out/slow" "$binary" "$slow,[expr]"
[[ $? == 1 ]] || fail "a stopped job did not fail the run"
grep -q "not completed: in_turn: turns out of launch order" "$out/slow/summary.txt" ||
  fail "the case the timeout cut short is not named"

"$python" "$script" --jobs 1 --out "$out/term" "$binary" "$slow" > /dev/null &
runner=$!
sleep 2
kill -TERM $runner
wait $runner
[[ $? == 1 ]] || fail "a runner stopped by SIGTERM did not fail"
grep -q "not completed: in_turn" "$out/term/summary.txt" || fail "SIGTERM: no summary naming the case"
pgrep -f "$out/term/job-0.txt" > /dev/null && fail "SIGTERM left a job running"

"$python" "$script" --out "$out/none" "$binary" "no such test case" 2> /dev/null &&
  fail "a filter that matches nothing passed"
"$python" "$script" --timeout -1 --out "$out/none" "$binary" 2> /dev/null &&
  fail "a negative timeout passed"
echo "run_tests_parallel.py: ok"
