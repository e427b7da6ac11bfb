#!/usr/bin/env bash
# Issue 35, 2026-12-04 (sixth session): the submit path with fewer loads after the driver's calls, against
# main, interleaved on one H200. Libraries (carried by carry.sh as BUILD/NAME/librig.so.0): main (BUILD's own),
# driver (the queued-wait list under the turn's word lock, kept before the wait's call), all (driver, and the
# stamps raised before the hand-over: core/submit.h's kRaiseFirst). bench/cuda's chain, two rounds of the
# three at 51 rounds, then one round each through the timed interposer (own time against the driver's).
# Usage (repository root, GPU machine): scripts/gpu/session26.sh BUILD. Writes $OUT/session26.txt.
# NOTE (found after the call): bench/cuda links rig statically, so the librig swapped on LD_LIBRARY_PATH
# below was never loaded: every row of this call ran one build (main). See session29.sh.
. scripts/gpu/session-env.sh "${1:-}"
lib() { [ "$1" = main ] && echo "$B" || echo "$B/$1"; }
{
  date -u
  for round in 1 2; do
    for l in main driver all; do
      echo "=== round $round: $l"
      LD_LIBRARY_PATH=$(lib $l):$LD_LIBRARY_PATH timeout 120 "$B/bench/cuda/bench_cuda_chain" 2048 51 1 2>&1 |
        grep -E "^  \((a|a1|b|d)\) |ratio (wall|host) +(a/b|a/d|b2/b|a1/d1)|cross-device edge|own part"
    done
  done
  for l in main driver all; do
    echo "=== timed: $l"
    LD_LIBRARY_PATH=$(lib $l):$LD_LIBRARY_PATH RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIGCOUNT_TIME=1 timeout 120 \
      "$B/bench/cuda/bench_cuda_chain" 2048 31 1 2>&1 | grep -E "ratio wall +a/b|ratio host +a/d|own time|^  (a|a1|b|d|d1) +[0-9]"
  done
  date -u
} 2>&1 | tee "$O/session26.txt"
