#!/usr/bin/env bash
# Instructions per compile, program to PTX, by callgrind: steadier than wall
# time on a shared machine, where identical runs vary by a third.
#   scripts/compile-instructions.sh [--lib DIR] PROGRAM...
# PROGRAM is a name tl-bench-compile knows (mha::shippedPrograms). Prints
# "PROGRAM INSTRUCTIONS" per line: tl::compileForGPU's instructions over the
# bench's two compiles (its warm-up and one timed) halved. --lib DIR runs
# another build's libtlc.so (DIR/libtlc.so), for before/after figures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TLC_BUILD_DIR:-$root/build}
lib=
if [[ ${1:-} == --lib ]]; then
  lib=$2
  shift 2
fi
(($#)) || { echo "usage: compile-instructions.sh [--lib DIR] PROGRAM..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "compile-instructions.sh needs valgrind" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for program in "$@"; do
  LD_LIBRARY_PATH=$lib valgrind --tool=callgrind --toggle-collect='tl::compileForGPU*' \
    --callgrind-out-file="$out/$program.cg" \
    "$build/bin/tl-bench-compile" --repeats 1 --program "$program" >/dev/null 2>&1
  total=$(grep -m1 '^totals:' "$out/$program.cg" | awk '{print $2}')
  echo "$program $((total / 2))"
done
