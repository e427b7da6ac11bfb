#!/usr/bin/env bash
# Issue 35, 2026-12-05 (thirteenth session): bench/cuda's chain through librig.so at the protocol
# (`bench_cuda_chain 2048 101 1`), as the issue asks, interleaved twice with BUILD/static (the same code's
# bench linked statically, as every figure before this session), then each once through the timing
# interposer (rig's own time over its calls by hand, and the driver calls an operation).
# Usage (repository root, GPU machine): scripts/gpu/session36.sh BUILD. Writes $OUT/session36.txt and the
# chains' logs (logs.tgz).
. scripts/gpu/session-env.sh "${1:-}"
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
declare -A bench=([so]=$B/bench/cuda/bench_cuda_chain [static]=$B/static/bench_cuda_chain)
{
  say_machine
  ldd "${bench[so]}" | grep librig
  interleaved 2 101 chain so static
  timed 1 31 so static
  date -u
} 2>&1 | tee "$O/session36.txt"
pack_logs
