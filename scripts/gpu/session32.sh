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
{
  say_machine
  interleaved "${ROUNDS:-3}" 51 chain before after
  timed 1 31 before after
  echo "=== CUDA tests of the new build (RIG_REQUIRE=cuda)"
  cuda_tests
  date -u
} 2>&1 | tee "$O/session32.txt"
