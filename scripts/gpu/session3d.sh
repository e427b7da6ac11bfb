#!/usr/bin/env bash
# The fourth H200 call of 2026-12-03's third session: test_keep_gpu with RIG_REQUIRE=cuda (whole output), and
# bench/keep/attach_sizes.py (a keeper's attach against tensor count and bytes, apart, then from a client with
# torch initialised).
# Usage (repository root, GPU machine): scripts/gpu/session3d.sh BUILD [layout]  (layout: the last step only)
#   Writes $OUT/session3d.txt.
set -u
B=$(cd "${1:?usage: session3d.sh BUILD}" && pwd)
O=${OUT:-/tmp}
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" 2>/dev/null
{
  date -u
  if [ "${2:-}" != layout ]; then
  echo "=== keeper on CUDA (RIG_REQUIRE=cuda)"
  RIG_REQUIRE=cuda timeout 120 "$B/tests/keep/test_keep_gpu" 2>&1 | tail -30
  fi
  . scripts/gpu/pyrig.sh
  if [ "${2:-}" != layout ]; then
  echo "=== attach against tensor count and bytes (bench/keep/attach_sizes.py)"
  timeout 200 python3 bench/keep/attach_sizes.py "$B/tools/rig" /tmp/sizes 2>&1
  echo "=== the same from a client with torch imported and cuda:0 initialised (ATTACH_TORCH=1)"
  ATTACH_TORCH=1 timeout 200 python3 bench/keep/attach_sizes.py "$B/tools/rig" /tmp/sizes 2>&1
  fi
  echo "=== which of layout and order the Llama file's slow IPC opens follow"
  ATTACH_SHAPES=${ATTACH_SHAPES:-"llama llama2m llamasorted 160x108003328"} timeout 200 python3 bench/keep/attach_sizes.py "$B/tools/rig" /tmp/sizes 2>&1
} 2>&1 | tee "$O/session3d.txt"
