#!/usr/bin/env bash
# Issue 35, 2026-12-05 (thirteenth session): bench/cuda through librig.so at the protocol
# (`bench_cuda_chain 2048 101 1`), twice, on whatever card the call gets (the issue names an H200).
# Usage (repository root, GPU machine): scripts/gpu/session38.sh BUILD (carried as session36.sh's). Writes
# $OUT/session38.txt and the chains' logs (logs.tgz).
. scripts/gpu/session-env.sh "${1:-}"
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
declare -A bench=([so]=$B/bench/cuda/bench_cuda_chain)
{
  say_machine
  interleaved 2 101 chain so
  date -u
} 2>&1 | tee "$O/session38.txt"
pack_logs
