#!/usr/bin/env bash
# Sourced by the session scripts (scripts/gpu/session5.sh onward) on the GPU machine, from the repository
# root, with the carried build as $1: sets B (the build, absolute), O ($OUT, else /tmp) and RIG (its rig),
# puts the build's librig first on the library path, drops a counting interposer's RIG_CUDA_LIBRARY, makes
# the carried binaries executable and turns on set -u. The usage line names the sourcing script.
set -u
[ -d "${1:-}" ] || { echo "usage: $(basename "$0") BUILD (a carried build directory)" >&2; exit 2; }
B=$(cd "$1" && pwd)
O=${OUT:-/tmp}
RIG=$B/tools/rig
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" 2>/dev/null
