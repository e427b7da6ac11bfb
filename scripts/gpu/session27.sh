#!/usr/bin/env bash
# Issue 35, 2026-12-04 (sixth session): the stream devices' in-queue waits in a lock-free ring (no lock but the
# turn on the submit path). The CUDA, loader and keeper tests with RIG_REQUIRE=cuda (the floor through the
# counting interposer, and through its timing), then bench/cuda's chain, interleaved: before (main at
# 396657f, carried as BUILD/before/librig.so.0) and this build, three rounds of the two at 51 rounds, then
# each once through the timed interposer (own time against the driver's).
# Usage (repository root, GPU machine): scripts/gpu/session27.sh BUILD. Writes $OUT/session27.txt.
# NOTE (found after the call): bench/cuda links rig statically, so the librig swapped on LD_LIBRARY_PATH
# below was never loaded: every row of this call ran one build (the ring). session29.sh does it right.
. scripts/gpu/session-env.sh "${1:-}"
lib() { [ "$1" = this ] && echo "$B" || echo "$B/$1"; }
{
  date -u
  echo "=== tests (RIG_REQUIRE=cuda)"
  for t in tests/load/test_load_cuda tests/keep/test_keep_gpu tests/cuda/test_cuda_calls tests/cuda/test_cuda_floor; do
    RIG_REQUIRE=cuda timeout 120 "$B/$t" > /tmp/step.log 2>&1
    echo "--- $t rc=$?"; grep -E "PASSED|FAILED|LINE" /tmp/step.log
  done
  for time in 0 1; do
    RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIGCOUNT_TIME=$time RIG_REQUIRE=cuda timeout 120 "$B/tests/cuda/test_cuda_floor" > /tmp/step.log 2>&1
    echo "--- test_cuda_floor through the interposer, RIGCOUNT_TIME=$time rc=$?"; grep -E "PASSED|FAILED|LINE" /tmp/step.log
  done
  for round in 1 2 3; do
    for l in before this; do
      echo "=== round $round: $l"
      LD_LIBRARY_PATH=$(lib $l):$LD_LIBRARY_PATH timeout 120 "$B/bench/cuda/bench_cuda_chain" 2048 51 1 2>&1 |
        grep -E "^  \((a|a1|b|d)\) |ratio (wall|host) +(a/b|a/d|b2/b|a1/d1|a16/b16)|cross-device edge|own part"
    done
  done
  for l in before this; do
    echo "=== timed: $l"
    LD_LIBRARY_PATH=$(lib $l):$LD_LIBRARY_PATH RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIGCOUNT_TIME=1 timeout 120 \
      "$B/bench/cuda/bench_cuda_chain" 2048 31 1 2>&1 | grep -E "ratio wall +a/b|ratio host +a/d|own time|^  (a|a1|b|d|d1) +[0-9]"
  done
  date -u
} 2>&1 | tee "$O/session27.txt"
