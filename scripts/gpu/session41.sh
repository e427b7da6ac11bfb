#!/usr/bin/env bash
# Issue 35, 2026-12-06 (fifteenth session): one frame fewer on each side of the submit (submit_near inline in
# the C entry, the stream hand-over inline in the record's), against main before it (2ff9eff), both through
# librig.so with the same bench binary; and, in every run, what a window of 256 events costs rig ((aw),
# RIG_EVENT_WINDOW=256) and what 256 events cost the calls by hand ((ds)) against (b). bench/cuda
# `2048 101 1`, the two libraries interleaved twice; then the CUDA tests of the new build. Usage (repository
# root, GPU machine): scripts/gpu/session41.sh BUILD (carried with BUILD/base/librig.so.0: carry.sh's
# OTHER_LIBRIG). Writes $OUT/session41.txt and the chains' logs (logs.tgz).
. scripts/gpu/session-env.sh "${1:-}"
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
export BENCH_AW_WINDOW=256 BENCH_DS_EVENTS=256
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s:$LD_LIBRARY_PATH exec %s "$@"\n' "$B/base" "$B/bench/cuda/bench_cuda_chain" > /tmp/base
chmod +x /tmp/base
declare -A bench=([new]=$B/bench/cuda/bench_cuda_chain [base]=/tmp/base)
{
  say_machine
  LD_LIBRARY_PATH=$B/base:$LD_LIBRARY_PATH ldd "$B/bench/cuda/bench_cuda_chain" | grep librig
  ldd "$B/bench/cuda/bench_cuda_chain" | grep librig
  interleaved 2 101 chain new base
  STEPS_UNTIL=330 cuda_tests
  date -u
} 2>&1 | tee "$O/session41.txt"
pack_logs
