# shellcheck shell=bash
# Sourced on the GPU machine by gpu-session.sh and by a call's own script
# (`source scripts/gpu-call-env.sh` from the repository root or anywhere): enters
# .carry/ (bash scripts/carry.sh here built it), unpacks the library carry.sh
# compressed (the carried tree must stay under 64 MiB), puts it and CUDA's tools
# on the paths and gives the JIT a fresh cache.
cd "$(dirname "${BASH_SOURCE[0]}")/../.carry" || {
  echo "no .carry/: run scripts/carry.sh first"
  exit 2
}
[[ -f lib/libtlc.so.gz ]] && gunzip -f lib/libtlc.so.gz
export LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
TLC_CACHE_DIR=$(mktemp -d)
export TLC_CACHE_DIR
