#!/usr/bin/env bash
# Issue 35, 2026-12-05 (twelfth session): rig's own time over its calls by hand (bench/cuda's chain through the
# timing interposer), this build ("new": a submit that only stores after its last driver call) against
# BUILD/base (main before it), interleaved ROUNDS times (3), then each build's plain chain once, then the lines
# probe (bench/probes/lines_probe.cu) with 101 rounds. session34.sh's call (an H100) could not tell the two
# apart from one timed pass each.
# Ran once (2026-12-05 15:27 UTC, on an H100 host): the change cost rig 0.01-0.06 us and was dropped.
# Usage (repository root, GPU machine): [ROUNDS=N] scripts/gpu/session35.sh BUILD. Writes $OUT/session35.txt
# and the chains' logs.
. scripts/gpu/session-env.sh "${1:-}"
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
declare -A bench=([base]=$B/base/bench_cuda_chain [new]=$B/bench/cuda/bench_cuda_chain)
{
  say_machine
  timed "${ROUNDS:-3}" 31 base new
  interleaved 1 51 chain base new
  echo "=== lines probe"
  nvcc -O2 -o /tmp/lp bench/probes/lines_probe.cu -lcuda && timeout 90 /tmp/lp 2048 101
  date -u
} 2>&1 | tee "$O/session35.txt"
(cd "$O" && tar czf logs.tgz ./*.log && rm -f ./*.log)  # the files a call brings back are few
