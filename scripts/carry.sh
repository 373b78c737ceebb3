#!/usr/bin/env bash
# Builds the carry build (TLC_CARRY=ON: one libtlc.so with static MLIR/LLVM
# inside) into build-carry/ and stages what the GPU machine runs into .carry/
# (git-ignored): bin/ (tests, tools, benchmarks), lib/libtlc.so (stripped) and
# the peer benchmark script. See shared/device.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-carry
bash "$root/scripts/bootstrap.sh"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTLC_CARRY=ON
fi
cmake --build "$build"
rm -rf "$root/.carry"
mkdir -p "$root/.carry/bin" "$root/.carry/lib"
strip -o "$root/.carry/lib/libtlc.so" "$build/lib/libtlc.so"
# Compressed (59 MiB -> 24): with the working tree the carry must stay under
# 64 MiB; gpu-session.sh unpacks it there.
gzip -5 "$root/.carry/lib/libtlc.so"
# (Not the CPU-only tools and tests: the carry must stay under 64 MiB.)
for exe in "$build"/bin/*; do
  case $(basename "$exe") in
  tl-unit-tests | tl-bench-cpu | tl-bench-compile) continue ;;
  esac
  strip -o "$root/.carry/bin/$(basename "$exe")" "$exe"
done
# The example application, built against the installed carry build as a
# user would build it (find_package); it runs with LD_LIBRARY_PATH=lib.
cmake --install "$build" --prefix "$build/prefix" > /dev/null
cmake -S "$root/examples/mha_jit" -B "$build/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$build/prefix" > /dev/null
cmake --build "$build/example"
strip -o "$root/.carry/bin/mha_jit" "$build/example/mha_jit"
# A program on a `tlc --emit=header` header (the reference-shape forward),
# compiled here, run there: tests/lit/Inputs/run_header.cpp.
mkdir -p "$build/header"
TLC_CACHE_DIR="$build/header/cache" "$build/bin/tlc" "$root/tests/lit/Inputs/mha_generators.cpp" \
  -k flash_fwd --emit=header --target=sm_90a -o "$build/header/generated_fwd.h"
c++ -std=c++20 -O2 -I"$build/header" -I"$root/support/include" -I"$root/dsl/include" -I"$root/runtime/include" \
  -I"$root/compiler/include" "$root/tests/lit/Inputs/run_header.cpp" -o "$build/header/run_header" \
  -L"$build/lib" -ltlc -Wl,-rpath,'$ORIGIN/../lib'
strip -o "$root/.carry/bin/run_header" "$build/header/run_header"
cp "$root/tools/bench/accuracy_peer.py" "$root/tools/bench/copy_peer.py" "$root/tests/sass_check.sh" \
  "$root/scripts/run_tests_parallel.py" "$root/.carry/"
# The GPU tests' durations in earlier calls' logs, by which run_tests_parallel.py deals them
# to its jobs (gpu-session.sh tests); with Catch2's line for a case a signal cut short, whose
# duration the runner leaves out.
grep -hE '^[0-9]+\.[0-9]+ s: |due to a fatal error condition' "$root"/results/raw/*.log \
  > "$root/.carry/test-durations.log" || true
for peer in sdpa_peer.py gemm_peer.py; do
  if [[ -f "$root/../shared/bench/$peer" ]]; then
    cp "$root/../shared/bench/$peer" "$root/.carry/"
  fi
done
# For gpu-session.sh's ab part: TLC_CARRY_BEFORE=DIR, a copy of an earlier
# .carry (its lib/libtlc.so.gz, bin/tl-bench-gpu and bin/tl-bench-gemm; not
# .carry itself, which is rebuilt above), rides along as .carry/before/.
if [[ -n ${TLC_CARRY_BEFORE:-} ]]; then
  mkdir -p "$root/.carry/before/lib" "$root/.carry/before/bin"
  cp "$TLC_CARRY_BEFORE/lib/libtlc.so.gz" "$root/.carry/before/lib/"
  cp "$TLC_CARRY_BEFORE/bin/tl-bench-gpu" "$TLC_CARRY_BEFORE/bin/tl-bench-gemm" \
    "$root/.carry/before/bin/"
fi
du -sh "$root/.carry"
