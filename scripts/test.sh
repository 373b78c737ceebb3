#!/usr/bin/env bash
# Builds tlc and runs every test (Catch2 unit tests, lit/FileCheck tests).
# GPU tests carry the ctest label `gpu` and report as skipped without a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TLC_BUILD_DIR:-$root/build}
start=$(date +%s)
bash "$root/scripts/build.sh"
echo "test.sh: build done in $(( $(date +%s) - start )) s"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
echo "test.sh: total $(( $(date +%s) - start )) s"
