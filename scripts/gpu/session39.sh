#!/usr/bin/env bash
# Issue 35, 2026-12-05 (fourteenth session): the protocol on the card it names, an H200: bench/cuda
# through librig.so (`bench_cuda_chain 2048 101 1`) twice, then one timed pass (rig's own time over its calls
# by hand). Exits 3 at once on any other card (six H100 hosts already ran it). Usage (repository root, GPU
# machine): scripts/gpu/session39.sh BUILD. Writes $OUT/session39.txt and the chains' logs (logs.tgz).
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { nvidia-smi -L; exit 3; }
. scripts/gpu/session-env.sh "${1:-}"
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
declare -A bench=([so]=$B/bench/cuda/bench_cuda_chain)
{
  say_machine
  interleaved 2 101 chain so
  timed 1 31 so
  date -u
} 2>&1 | tee "$O/session39.txt"
pack_logs
