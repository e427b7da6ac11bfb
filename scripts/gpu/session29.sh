#!/usr/bin/env bash
# Issue 35, 2026-12-04 (sixth session): the ring of in-queue waits against main at 396657f, as session27.sh
# meant to measure it. bench/cuda links rig statically, so the library on LD_LIBRARY_PATH that session26.sh
# and session27.sh swapped changed nothing: every row of each of those calls ran one build. Here each side
# is its own bench binary (BUILD/before/bench_cuda_chain built from 396657f, BUILD's own from this main),
# three rounds of the two at 51 rounds, interleaved.
# Usage (repository root, GPU machine): scripts/gpu/session29.sh BUILD. Writes $OUT/session29.txt.
. scripts/gpu/session-env.sh "${1:-}"
bin() { [ "$1" = this ] && echo "$B/bench/cuda/bench_cuda_chain" || echo "$B/before/bench_cuda_chain"; }
{
  date -u
  for round in 1 2 3; do
    for l in before this; do
      echo "=== round $round: $l"
      timeout 120 "$(bin $l)" 2048 51 1 2>&1 | grep -E "ratio (wall|host) +(a/b|a/d|b2/b|a1/d1)|cross-device edge"
    done
  done
  date -u
} 2>&1 | tee "$O/session29.txt"
