#!/usr/bin/env bash
# Issue 35, 2026-12-04 (sixth session): where a chained operation's host time goes on the H200. bench/cuda's
# chain at 101 rounds as shipped, then through the counting interposer with its timing on (RIGCOUNT_TIME=1:
# each row's host time split into time inside the driver's entries and the row's own), and the floor test
# through the timed interposer (its trampolines must leave every call's arguments and result as they were).
# Usage (repository root, GPU machine): scripts/gpu/session25.sh BUILD. Writes $OUT/session25.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; grep -m1 "model name" /proc/cpuinfo
  echo "=== test_cuda_floor through the timed interposer"
  RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIGCOUNT_TIME=1 RIG_REQUIRE=cuda timeout 120 "$B/tests/cuda/test_cuda_floor" > /tmp/step.log 2>&1
  echo "rc=$?"; grep -E "PASSED|FAILED|LINE" /tmp/step.log
  echo "=== bench/cuda chain 2048 101 1"
  timeout 240 "$B/bench/cuda/bench_cuda_chain" 2048 101 1 2>&1
  echo "=== bench/cuda chain 2048 51 1, timed interposer"
  RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIGCOUNT_TIME=1 timeout 240 "$B/bench/cuda/bench_cuda_chain" 2048 51 1 2>&1
  date -u
} 2>&1 | tee "$O/session25.txt"
