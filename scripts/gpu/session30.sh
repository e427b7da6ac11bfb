#!/usr/bin/env bash
# Issue 35, 2026-12-04 (seventh session): is (d)'s ring of 1024 events what (d)/(b) costs? bench/cuda's
# chain with two more hand-written rows, (ds) 16 events a stream in turn and (dq) 32 with a query every 16,
# twice at 101 rounds, then once through the timing interposer (31 rounds) for the driver's time per row.
# Usage (repository root, GPU machine): scripts/gpu/session30.sh BUILD. Writes $OUT/session30.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u
  for run in 1 2; do
    echo "=== bench/cuda chain 2048 101 1, run $run"
    timeout 240 "$B/bench/cuda/bench_cuda_chain" 2048 101 1 2>&1
  done
  echo "=== bench/cuda chain 2048 31 1 through the timing interposer"
  RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIGCOUNT_TIME=1 timeout 240 "$B/bench/cuda/bench_cuda_chain" 2048 31 1 2>&1
  date -u
} 2>&1 | tee "$O/session30.txt"
