#!/usr/bin/env bash
# Issue 35, 2026-12-05 (eighth session): the first H200 call since the event window, the inline timeline and
# the core's near path (2026-12-04, built with no GPU lent): are they right on the real driver, and is the
# window worth making the default? session30.sh's bench first (the rows (ds), (dq), (aw); its decision),
# then the driver suites, the calls and floor tests, the model with CUDA kinds (also with the smallest
# window, RIG_EVENT_WINDOW=2: the order must hold however often the events turn), the loader and the
# keeper on CUDA (RIG_REQUIRE=cuda: a skip fails), then the bench again if time is left.
# Usage (repository root, GPU machine): scripts/gpu/session31.sh BUILD. Writes $OUT/session31.txt.
. scripts/gpu/session-env.sh "${1:-}"
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
chain() {  # ROUNDS: bench/cuda's chain, its ratio and edge lines
  timeout 150 "$B/bench/cuda/bench_cuda_chain" 2048 "$1" 1 > /tmp/chain.log 2>&1
  echo "rc=$?"; grep -E "ratio|edge|^ *\((a|aw|b|d|ds|dq|a16|b16|br)\) " /tmp/chain.log
}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "=== bench/cuda chain 2048 101 1, run 1"
  chain 101
  echo "=== CUDA tests (RIG_REQUIRE=cuda)"
  cuda_tests
  RIG_REQUIRE=cuda RIG_EVENT_WINDOW=2 step 90 "$B/tests/drivers/test_driver_suite_cuda"
  if [ $SECONDS -lt 160 ]; then echo "=== bench/cuda chain 2048 101 1, run 2"; chain 101; fi
  if [ $SECONDS -lt 200 ]; then
    echo "=== bench/cuda chain 2048 31 1 through the timing interposer"
    RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIGCOUNT_TIME=1 timeout 100 "$B/bench/cuda/bench_cuda_chain" 2048 31 1 > /tmp/chain.log 2>&1
    echo "rc=$?"; grep -E "ratio|edge|driver|^ *\((a|aw|b|d|ds|dq)\) " /tmp/chain.log
  fi
  date -u
} 2>&1 | tee "$O/session31.txt"
cp /tmp/chain.log "$O/" 2>/dev/null
