#!/usr/bin/env bash
# scripts/run_tests_parallel.py on the CPU test binary: every listed case runs once (names with
# commas included: Catch2's escapes), a job past --timeout is stopped and its unfinished case
# named, a filter that matches nothing is an error.
#   run_tests_parallel_check.sh PYTHON SCRIPT TL-UNIT-TESTS
set -uo pipefail
python=$1 script=$2 binary=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

filter="[expr],[misuse]"
"$python" "$script" --jobs 3 --out "$out/ok" "$binary" "$filter" || fail "a passing run exited $?"
listed=$("$binary" --list-test-names-only "$filter" | grep -c .)
ran=$(cat "$out"/ok/job-*.log | grep -cE '^[0-9]+\.[0-9]+ s: ')
[[ $listed == "$ran" ]] || fail "$listed cases listed, $ran ran"
grep -q "passed$" "$out/ok/summary.txt" || fail "no 'passed' in the summary"

# The in_turn case waits ten seconds for a turn that never comes.
slow="in_turn: turns out of launch order*"
"$python" "$script" --jobs 1 --timeout 2 --out "$out/slow" "$binary" "$slow,[expr]"
[[ $? == 1 ]] || fail "a stopped job did not fail the run"
grep -q "not finished: in_turn: turns out of launch order" "$out/slow/summary.txt" ||
  fail "the stopped case is not named"

"$python" "$script" --out "$out/none" "$binary" "no such test case" 2> /dev/null &&
  fail "a filter that matches nothing passed"
echo "run_tests_parallel.py: ok"
