#!/usr/bin/env bash
# The last H200 call of 2026-12-04's fourth session, on the main that goes to CI (the pool calls out of the
# stream table): the CUDA, loader and keeper tests with RIG_REQUIRE=cuda (test_cuda_floor and the loader's
# through the counting interposer too); the Llama-like 16 GiB in 4 shards (layouts.py, two rounds); and
# bench/cuda's chain at 101 rounds (issue 35's rows).
# Usage (repository root, GPU machine): scripts/gpu/session21.sh BUILD. Writes $OUT/session21.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "=== tests (RIG_REQUIRE=cuda)"
  for t in tests/load/test_load_cuda tests/keep/test_keep_gpu tests/cuda/test_cuda_calls tests/cuda/test_cuda_floor; do
    RIG_REQUIRE=cuda timeout 120 "$B/$t" > /tmp/step.log 2>&1
    echo "--- $t rc=$?"; grep -E "PASSED|FAILED" /tmp/step.log
  done
  for t in tests/load/test_load_cuda tests/cuda/test_cuda_floor; do
    RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIG_REQUIRE=cuda timeout 120 "$B/$t" > /tmp/step.log 2>&1
    echo "--- $t through the counting interposer rc=$?"; grep -E "PASSED|FAILED|LINE|get_current|set_current" /tmp/step.log
  done
  echo "=== 16 GiB in 4 shards"
  LAYOUT_GIB=16 LAYOUTS=sharded ROUNDS=2 timeout 240 python3 bench/load/layouts.py "$RIG" /tmp/layouts16 "$B" 2>&1
  echo "=== bench/cuda chain 2048 101 1"
  timeout 200 "$B/bench/cuda/bench_cuda_chain" 2048 101 1 2>&1 | grep -E "^  \(a\)|^  \(b\) |^  \(d\) |ratio wall  a/b|ratio host  a/d|ratio wall b2/b|cross-device edge|a16/b16|a/br"
  date -u
} 2>&1 | tee "$O/session21.txt"
