#!/usr/bin/env bash
# Issue 35, 2026-12-05 (ninth session): the submit path in fewer cache lines (93dd0de: 46 -> 30 data lines
# and 54 -> 44 code lines a chained submit on the fake) against main before it (dd83ddd), in one call on one
# H200: bench/cuda's chain from the two builds interleaved ROUNDS times (3) (the bench links rig statically, so
# each binary is its build), then each through the timing interposer (rig's own time over (d)), then the
# CUDA tests of the new build (RIG_REQUIRE=cuda: a skip fails).
# Ran once (2026-12-05 05:22 UTC, 93dd0de); the next call, not lent that session, is the same with 11f3181 or
# later as BUILD and ROUNDS=4.
# Usage (repository root, GPU machine): [ROUNDS=N] scripts/gpu/session32.sh BUILD, BUILD/before/bench_cuda_chain the
# old bench (scripts/gpu/carry.sh's OTHER arguments). Writes $OUT/session32.txt and the chain logs.
. scripts/gpu/session-env.sh "${1:-}"
STEPS_UNTIL=520
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
declare -A bench=([before]=$B/before/bench_cuda_chain [after]=$B/bench/cuda/bench_cuda_chain)
chain() {  # NAME ROUNDS LOG: one build's chain, its ratio and edge lines
  local t0=$SECONDS
  timeout 150 "${bench[$1]}" 2048 "$2" 1 > "$O/$3" 2>&1
  echo "$1: rc=$?, $((SECONDS - t0)) s"
  grep -E "ratio|edge|own time|^  (a|a1|b|d|d1) +[0-9]|^=== " "$O/$3" | sed "s|^|  $1 |"
}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for r in $(seq "${ROUNDS:-3}"); do
    for b in before after; do
      echo "=== chain 2048 51 1, $b, round $r"
      chain $b 51 "chain-$b-$r.log"
    done
  done
  for b in before after; do
    echo "=== chain 2048 31 1 through the timing interposer, $b"
    RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIGCOUNT_TIME=1 chain $b 31 "timed-$b.log"
  done
  echo "=== CUDA tests of the new build (RIG_REQUIRE=cuda)"
  cuda_tests
  date -u
} 2>&1 | tee "$O/session32.txt"
