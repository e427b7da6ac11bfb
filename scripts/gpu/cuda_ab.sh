#!/usr/bin/env bash
# Before/after of the submit path on one GPU in the same minutes: bench/cuda's chain and bench/interop's
# edge (both link rig statically) from BEFORE_DIR and from BUILD_DIR, interleaved ROUNDS times (default 3),
# ROUNDS_CHAIN rounds of the chain each (default 51). A figure that moves between two runs of one build is
# the machine; one that moves between the builds in every round is the change.
# Usage (repository root, on the GPU machine): scripts/gpu/cuda_ab.sh BUILD_DIR BEFORE_DIR
# BEFORE_DIR holds bench/cuda/bench_cuda_chain and bench/interop/bench_interop_edge built from the
# commit before. Writes $OUT/cuda-ab/<build>-<round>-{chain,edge}.log and the ratio lines in summary.txt.
set -u
after=${1:?usage: scripts/gpu/cuda_ab.sh BUILD_DIR BEFORE_DIR}
before=${2:?usage: scripts/gpu/cuda_ab.sh BUILD_DIR BEFORE_DIR}
L=${OUT:-/tmp/out}/cuda-ab
mkdir -p "$L"
unset RIG_CUDA_LIBRARY
export RIG_REQUIRE=cuda
for r in $(seq "${ROUNDS:-3}"); do
  for b in "$before" "$after"; do
    name=$(basename "$b")
    timeout 200 "$b/bench/cuda/bench_cuda_chain" 2048 "${ROUNDS_CHAIN:-51}" > "$L/$name-$r-chain.log" 2>&1
    timeout 60 "$b/bench/interop/bench_interop_edge" 1024 51 > "$L/$name-$r-edge.log" 2>&1
    {
      grep -E 'ratio wall  a/b|ratio host  a/d|edge, host a - a1' "$L/$name-$r-chain.log" | sed "s|^|$name r$r |"
      grep -E '^rig \(' "$L/$name-$r-edge.log" | sed "s|^|$name r$r edge |"
    } | cut -c1-120 | tee -a "$L/summary.txt"
  done
done
