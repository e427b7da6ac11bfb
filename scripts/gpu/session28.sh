#!/usr/bin/env bash
# Issue 35, 2026-12-04 (sixth session): the main that goes to CI (57e040e, the ring of in-queue waits) on the
# H200: the CUDA, loader and keeper tests with RIG_REQUIRE=cuda (the floor through the counting interposer),
# then bench/cuda's chain at 101 rounds as shipped.
# Usage (repository root, GPU machine): scripts/gpu/session28.sh BUILD. Writes $OUT/session28.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u
  for t in tests/load/test_load_cuda tests/keep/test_keep_gpu; do
    RIG_REQUIRE=cuda timeout 120 "$B/$t" > /tmp/step.log 2>&1
    echo "--- $t rc=$?"; grep -E "PASSED|FAILED|LINE" /tmp/step.log
  done
  RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIG_REQUIRE=cuda timeout 120 "$B/tests/cuda/test_cuda_floor" > /tmp/step.log 2>&1
  echo "--- test_cuda_floor through the interposer rc=$?"; grep -E "PASSED|FAILED|LINE" /tmp/step.log
  echo "=== bench/cuda chain 2048 101 1"
  timeout 240 "$B/bench/cuda/bench_cuda_chain" 2048 101 1 2>&1
  date -u
} 2>&1 | tee "$O/session28.txt"
