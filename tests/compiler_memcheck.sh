#!/usr/bin/env bash
# The compiler under valgrind's memcheck: tl-opt's GPU lowering (wgmma on) and
# CPU lowering over the lit inputs of the passes that rewrite the most IR, and
# tlc from tl text to PTX, each must run without an invalid read or write
# and without a crash (a pipelined loop's lowering once read the location of
# the op it had just erased: a compile in five crashed, and no output check
# saw it). Their own exit status does not matter otherwise: some inputs hold
# cases the passes refuse. Skipped (77) without valgrind.
#   compiler_memcheck.sh BIN_DIR LIT_DIR
set -uo pipefail
bin=$1 lit=$2
command -v valgrind >/dev/null || { echo "no valgrind: skipped"; exit 77; }
status=0
check() { # LABEL COMMAND...: the program and every existing-file argument must be there
  local label=$1 log arg
  shift
  [[ -x $1 ]] || { echo "FAIL $label: no program $1"; status=1; return; }
  for arg in "$@"; do
    if [[ $arg == *.mlir && ! -f $arg ]]; then
      echo "FAIL $label: no input $arg"
      status=1
      return
    fi
  done
  log=$(mktemp)
  valgrind --error-exitcode=99 -q "$@" >/dev/null 2>"$log"
  local rc=$?
  if ((rc == 99 || rc >= 128)); then
    echo "FAIL $label"
    grep -A12 "^==[0-9]*== [A-Z]" "$log" | head -40
    status=1
  else
    echo "ok   $label"
  fi
  rm -f "$log"
}
for input in tma warp-specialized wgmma-in-flight wait-wgmma tma-copies plan-pipelines wgmma \
  in-turn use-swizzle mbarrier-phases; do
  check "tl-opt --tl-gpu-lowering=wgmma=true $input.mlir" \
    "$bin/tl-opt" "$lit/$input.mlir" --tl-gpu-lowering=wgmma=true -split-input-file
done
check "tl-opt --tl-gpu-lowering convert-tl-to-gpu.mlir" \
  "$bin/tl-opt" "$lit/convert-tl-to-gpu.mlir" --tl-gpu-lowering -split-input-file
for input in convert-tl-to-cpu in-turn; do
  check "tl-opt --convert-tl-to-cpu $input.mlir" \
    "$bin/tl-opt" "$lit/$input.mlir" --convert-tl-to-cpu -split-input-file
done
check "tlc in-turn.mlir --target=sm_90a --emit=ptx" \
  "$bin/tlc" "$lit/in-turn.mlir" --target=sm_90a --emit=ptx -o /dev/null
exit $status
