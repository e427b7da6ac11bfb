#!/usr/bin/env bash
# Issue 35, 2026-12-05 (eleventh session): bench/cuda's chain from several builds interleaved ROUNDS times (4)
# in one call on one H200, then each through the timing interposer (rig's own time over (d)), then the CUDA
# tests of the carried build (RIG_REQUIRE=cuda: a skip fails). The bench links rig statically, so each binary
# is its build: BUILD/NAME/bench_cuda_chain for each NAME in $OTHERS (default "dd83ddd 06ba7a2": before the
# submit in fewer lines, and main before this session), and the carried build's own as "new" (a launch's
# prepared call in one line, the record's hot fields in one).
# Ran once (2026-12-05 13:50 UTC, 18550f8, ROUNDS=2; bench/README.md has the figures).
# Usage (repository root, GPU machine): [ROUNDS=N] [OTHERS="A B"] scripts/gpu/session33.sh BUILD. Writes
# $OUT/session33.txt and the chain logs.
. scripts/gpu/session-env.sh "${1:-}"
STEPS_UNTIL=540
export LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
declare -A bench=([new]=$B/bench/cuda/bench_cuda_chain)
names=()
for n in ${OTHERS:-dd83ddd 06ba7a2}; do bench[$n]=$B/$n/bench_cuda_chain; names+=("$n"); done
names+=(new)
{
  say_machine
  interleaved "${ROUNDS:-4}" 51 chain "${names[@]}"
  timed 1 31 "${names[@]}"
  echo "=== CUDA tests of the new build (RIG_REQUIRE=cuda)"
  cuda_tests
  date -u
} 2>&1 | tee "$O/session33.txt"
