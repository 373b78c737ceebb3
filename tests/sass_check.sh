#!/usr/bin/env bash
# The shipped GEMM's sm_90a machine code (no GPU needed): ptxas assembles the
# PTX tlc writes, cuobjdump disassembles it, and the Hopper instructions must
# be there. With a producer warpgroup (128x256x64, 256 consumer threads):
# HGMMA (wgmma), UTMALDG (TMA loads), SYNCS (mbarriers) and USETMAXREG (the
# register budgets); with one consumer warpgroup (128x128x64/128): HGMMA,
# UTMALDG and SYNCS, and no USETMAXREG (ptxas ignores setmaxnreg at 256
# threads or fewer, so tlc leaves it out). Exit 77 (skipped) without ptxas or
# cuobjdump: $PTXAS / $CUOBJDUMP, else PATH, else /usr/local/cuda/bin.
#   sass_check.sh BIN_DIR [WORK_DIR]
set -uo pipefail
bin=${1:?usage: sass_check.sh BIN_DIR [WORK_DIR]}
work=${2:-$(mktemp -d)}
find_tool() {
  local override=$1 name=$2
  if [[ -n "$override" ]]; then echo "$override"; return; fi
  command -v "$name" 2>/dev/null && return
  [[ -x /usr/local/cuda/bin/$name ]] && echo /usr/local/cuda/bin/$name
}
ptxas=$(find_tool "${PTXAS:-}" ptxas)
cuobjdump=$(find_tool "${CUOBJDUMP:-}" cuobjdump)
if [[ -z "$ptxas" || -z "$cuobjdump" ]]; then
  echo "sass_check: skipped (ptxas: ${ptxas:-none}, cuobjdump: ${cuobjdump:-none})"
  exit 77
fi
mkdir -p "$work"
failures=0
# config name, then the instructions it must have and must not have.
check() {
  local config=$1 must=$2 mustnot=$3
  local name=gemm_$(echo "$config" | awk -F, '{printf "%sx%sx%s_%s_s%s", $1, $2, $3, $4, $5}')
  "$bin/tl-bench-gemm" --ptx sm_90a "$work" --config "$config" > /dev/null || {
    echo "FAIL $config: tl-bench-gemm --ptx failed"; failures=$((failures + 1)); return; }
  "$ptxas" -arch=sm_90a "$work/$name.ptx" -o "$work/$name.cubin" || {
    echo "FAIL $config: ptxas failed"; failures=$((failures + 1)); return; }
  "$cuobjdump" -sass "$work/$name.cubin" > "$work/$name.sass" || {
    echo "FAIL $config: cuobjdump failed"; failures=$((failures + 1)); return; }
  for op in $must; do
    local n
    n=$(grep -c "\b$op\b" "$work/$name.sass")
    if [[ "$n" -eq 0 ]]; then
      echo "FAIL $config: no $op in the SASS ($work/$name.sass)"; failures=$((failures + 1))
    else
      echo "ok   $config: $op x$n"
    fi
  done
  for op in $mustnot; do
    if grep -q "\b$op\b" "$work/$name.sass"; then
      echo "FAIL $config: $op in the SASS ($work/$name.sass)"; failures=$((failures + 1))
    else
      echo "ok   $config: no $op"
    fi
  done
}
check 128,256,64,256,3 "HGMMA UTMALDG SYNCS USETMAXREG" ""
check 128,128,64,128,4 "HGMMA UTMALDG SYNCS" "USETMAXREG"
[[ $failures -eq 0 ]] && echo "sass_check: passed" || echo "sass_check: $failures failed"
[[ $failures -eq 0 ]]
