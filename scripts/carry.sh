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
for exe in "$build"/bin/*; do
  strip -o "$root/.carry/bin/$(basename "$exe")" "$exe"
done
if [[ -f "$root/../shared/bench/sdpa_peer.py" ]]; then
  cp "$root/../shared/bench/sdpa_peer.py" "$root/.carry/"
fi
du -sh "$root/.carry"
