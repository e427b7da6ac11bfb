#!/usr/bin/env bash
# Issue 35, 2026-12-05 (thirteenth session): does calling librig.so cost rig time? session36.sh's one timed
# pass of each put rig's own time over (d) at +0.240/+0.151 us through librig.so and +0.115/+0.089 us linked
# statically (copies/kernels), while its plain chains showed no such difference. Here the two benches through
# the timing interposer, interleaved ROUNDS times (3), then the librig.so bench once more at the protocol.
# Usage (repository root, GPU machine): [ROUNDS=N] scripts/gpu/session37.sh BUILD (carried as session36.sh's).
# Writes $OUT/session37.txt and the chains' logs (logs.tgz).
. scripts/gpu/session-env.sh "${1:-}"
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
declare -A bench=([so]=$B/bench/cuda/bench_cuda_chain [static]=$B/static/bench_cuda_chain)
{
  say_machine
  timed "${ROUNDS:-3}" 31 so static
  interleaved 1 101 chain so
  date -u
} 2>&1 | tee "$O/session37.txt"
pack_logs
