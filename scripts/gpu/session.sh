#!/usr/bin/env bash
# One H200 call for a session's before/after: the CUDA tests with RIG_REQUIRE=cuda on the new build, the loader
# on every layout (bench/load/layouts.py) through the old and the new librig interleaved, and bench/cuda's chain
# A/B (scripts/gpu/cuda_ab.sh). Usage (repository root, on the GPU machine):
#   scripts/gpu/session.sh NEW_BUILD OLD_BUILD     (each a carried release build: librig.so.0, tools/rig, bench/)
# PARTS (default "tests bench"): tests = the CUDA tests and issue 36's GPU checks; bench = layouts and chain A/B.
# Each part fits one device command (10 minutes) alone.
# Writes $OUT/session.txt (every summary line) and $OUT/logs.tgz.
set -u
new=$(cd "${1:?usage: session.sh NEW_BUILD OLD_BUILD}" && pwd)
old=$(cd "${2:?usage: session.sh NEW_BUILD OLD_BUILD}" && pwd)
final=${OUT:-/tmp/out}
export OUT=/tmp/session-logs PYTHONUNBUFFERED=1
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done
ldconfig 2>/dev/null
chmod -R u+x "$new" "$old" 2>/dev/null
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  parts=${PARTS:-tests bench}
  if [[ $parts == *tests* ]]; then
  echo "=== cuda tests (RIG_REQUIRE=cuda)"
  CUDA_SH_BUDGET_S=${CUDA_BUDGET:-200} timeout 260 stdbuf -oL bash scripts/gpu/cuda.sh "$new" 2>&1 | tail -70
  echo "=== issue 36 on the GPU: the README program on every pair present, 10,000 neighbouring heap pairs"
  (cd "$new" && LD_LIBRARY_PATH=$new:$new/tests/cuda RIG_REQUIRE=cuda timeout 60 tests/core/test_pairs "$OLDPWD/README.md") 2>&1 | tail -15
  LD_LIBRARY_PATH=$new:$new/tests/cuda RIG_TEST_KINDS=cuda RIG_TEST_PAIRS=10000 RIG_REQUIRE=cuda timeout 120 \
    "$new/tests/core/test_neighbours" 2>&1 | tail -8
  if command -v compute-sanitizer >/dev/null; then
    LD_LIBRARY_PATH=$new:$new/tests/cuda RIG_TEST_KINDS=cuda RIG_TEST_PAIRS=200 RIG_REQUIRE=cuda timeout 120 \
      compute-sanitizer --tool memcheck --error-exitcode 9 "$new/tests/core/test_neighbours" 2>&1 | tail -6
  fi
  fi
  if [[ $parts == *bench* ]]; then
  echo "=== layouts (old, new interleaved)"
  ROUNDS=${LAYOUT_ROUNDS:-2} LAYOUT_GIB=${LAYOUT_GIB:-4} timeout 240 stdbuf -oL python3 bench/load/layouts.py \
    "$new/tools/rig" /tmp/layouts "$old" "$new" 2>&1
  echo "=== cuda chain A/B (old, new)"
  ROUNDS=${AB_ROUNDS:-2} ROUNDS_CHAIN=${AB_CHAIN:-51} timeout 150 stdbuf -oL bash scripts/gpu/cuda_ab.sh "$new" "$old" 2>&1
  fi
} 2>&1 | tee "$final/session.txt"
tar czf "$final/logs.tgz" -C "$OUT" . 2>/dev/null
