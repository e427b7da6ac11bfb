#!/usr/bin/env bash
# Issue 35, 2026-12-04 (seventh session; written then, not run: no GPU was lent): is (d)'s ring of 1024
# events what (d)/(b) costs, and does rig win it back with a window of events? bench/cuda's chain with the
# rows (ds) 16 events a stream in turn, (dq) 32 with a query every 16, and (aw) rig with RIG_EVENT_WINDOW=32,
# twice at 101 rounds, then once through the timing interposer (31 rounds) for the driver's time per row.
# Read: d/ds (the ring's cost to the driver), dq/b (a window's questions), aw/a and aw/b (rig with a window).
# The bench links rig statically: this build's rows are this build's code, both timelines in one binary.
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
