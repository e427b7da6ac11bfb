#!/usr/bin/env bash
# Issue 35, 2026-12-05 (twelfth session): what a line of rig's own memory costs after the driver's calls on
# this host (bench/probes/lines_probe.cu, twice), then bench/cuda's chain of this build ("new": a submit that
# only stores after its last driver call, to addresses it took before the first) against BUILD/base (main
# before it) interleaved ROUNDS times (3), each through the timing interposer, then the CUDA tests of the
# carried build (RIG_REQUIRE=cuda: a skip fails). The bench links rig statically, so each binary is its build.
# Ran once (2026-12-05 15:04 UTC, on an H100 host). The change ("new") was dropped: bench/README.md, "Stores after the
# last call".
# Usage (repository root, GPU machine): [ROUNDS=N] [OTHERS="A B"] scripts/gpu/session34.sh BUILD. Writes
# $OUT/session34.txt, the probe's and the chains' logs.
. scripts/gpu/session-env.sh "${1:-}"
STEPS_UNTIL=540
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
declare -A bench=([new]=$B/bench/cuda/bench_cuda_chain)
names=()
for n in ${OTHERS:-base}; do bench[$n]=$B/$n/bench_cuda_chain; names+=("$n"); done
names+=(new)
{
  say_machine
  lscpu | grep -E "L1d|L2|L3"
  echo "=== lines probe"
  nvcc -O2 -o /tmp/lp bench/probes/lines_probe.cu -lcuda && for i in 1 2; do timeout 60 /tmp/lp 2048 51; done
  interleaved "${ROUNDS:-3}" 51 chain "${names[@]}"
  timed 1 31 "${names[@]}"
  echo "=== CUDA tests of the new build (RIG_REQUIRE=cuda)"
  cuda_tests
  date -u
} 2>&1 | tee "$O/session34.txt"
