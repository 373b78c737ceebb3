#!/usr/bin/env bash
# The main job: build, then build and verify the reference's MHA programs and
# print their tl IR summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TLC_BUILD_DIR:-$root/build}
bash "$root/scripts/build.sh"
"$build/bin/tl-mha" "$@"
