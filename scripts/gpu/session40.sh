#!/usr/bin/env bash
# Issue 35, 2026-12-05 (fourteenth session): is rig's host-to-host spread the submitting thread moving between
# cores? bench/cuda through librig.so (`bench_cuda_chain 2048 101 1`), as the process starts it and pinned to
# one core (taskset -c 3: every row of the bench then runs on that core, the driver's own threads wherever
# they are), interleaved twice, on whatever card the call gets. Usage (repository root, GPU machine):
# scripts/gpu/session40.sh BUILD. Writes $OUT/session40.txt and the chains' logs (logs.tgz).
. scripts/gpu/session-env.sh "${1:-}"
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
command -v taskset >/dev/null || { echo "no taskset on this machine"; exit 3; }
printf '#!/bin/sh\nexec taskset -c 3 %s "$@"\n' "$B/bench/cuda/bench_cuda_chain" > /tmp/pinned && chmod +x /tmp/pinned
declare -A bench=([so]=$B/bench/cuda/bench_cuda_chain [pinned]=/tmp/pinned)
{
  say_machine
  interleaved 2 101 chain so pinned
  date -u
} 2>&1 | tee "$O/session40.txt"
pack_logs
