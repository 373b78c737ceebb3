#!/usr/bin/env bash
# Snapshots every shipped kernel for a refactor's before/after check:
#   scripts/kernel-snapshot.sh DIR        writes DIR/{sm_90a,sm_80}/*.ptx, DIR/ir.txt
#                                          and, where ptxas is, DIR/{arch}/*.cubin
#   scripts/kernel-snapshot.sh --diff A B  compares two snapshots
# PTX that differs only in register numbering or instruction order can still
# assemble to the same machine code; the cubin comparison says so, and then no
# measurement is needed. Anything else is a change to measure on the H200.
# tl-mha --ptx compiles as the JIT does: the environment's TLC_* code-generation
# variables apply (TLC_STMATRIX=0 snapshots the kernels without stmatrix); the snapshot
# records them in DIR/variables.txt, and --diff says when two differ.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TLC_BUILD_DIR:-$root/build}
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}

if [[ ${1:-} == --diff ]]; then
  a=$2 b=$3 status=0
  cmp -s "$a/ir.txt" "$b/ir.txt" || { echo "tl IR differs"; status=1; }
  cmp -s "$a/variables.txt" "$b/variables.txt" ||
    echo "taken under different TLC_* variables: $(cat "$a/variables.txt" 2>/dev/null) |" \
      "$(cat "$b/variables.txt" 2>/dev/null)"
  for arch in sm_90a sm_80; do
    for ptx in "$a/$arch"/*.ptx; do
      name=$(basename "$ptx" .ptx)
      if cmp -s "$ptx" "$b/$arch/$name.ptx"; then
        continue
      elif [[ -f "$a/$arch/$name.cubin" ]] && cmp -s "$a/$arch/$name.cubin" "$b/$arch/$name.cubin"; then
        echo "$arch $name: PTX differs, cubin identical"
      else
        echo "$arch $name: DIFFERS (measure it)"
        status=1
      fi
    done
  done
  [[ $status == 0 ]] && echo "every shipped kernel assembles to identical machine code"
  exit $status
fi

dir=${1:?usage: kernel-snapshot.sh DIR | --diff A B}
mkdir -p "$dir"
env | grep '^TLC_' | sort >"$dir/variables.txt" || true
"$build/bin/tl-mha" --print-shipped-ir >"$dir/ir.txt"
for arch in sm_90a sm_80; do
  "$build/bin/tl-mha" --ptx "$arch" "$dir/$arch" >/dev/null
  if [[ -x $ptxas ]]; then
    for ptx in "$dir/$arch"/*.ptx; do
      "$ptxas" -arch="$arch" -O3 "$ptx" -o "${ptx%.ptx}.cubin"
    done
  fi
done
echo "snapshot in $dir"
