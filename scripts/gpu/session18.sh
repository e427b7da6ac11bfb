#!/usr/bin/env bash
# The last H200 call of 2026-12-04's third session: bench/cuda's chain at 101 rounds on this main (issue 35's
# figures), and first loads by how the process loads on the Llama-like file and the 4-shard checkpoint
# (first_loads.py, once and --repeat 3, two rounds).
# Usage (repository root, GPU machine): scripts/gpu/session18.sh BUILD. Writes $OUT/session18.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u
  echo "=== bench/cuda chain 2048 101 1"
  timeout 200 "$B/bench/cuda/bench_cuda_chain" 2048 101 1 2>&1 | grep -E "^  \(a\)|^  \(b\) |^  \(d\) |ratio wall  a/b|ratio host  a/d|ratio wall b2/b|cross-device edge|a16/b16|a/br|^[a-z0-9 ]+KiB|^tiny|^4 KiB"
  LAYOUTS="llama sharded" ROUNDS=0 timeout 150 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | tail -2
  echo "=== first loads"
  VARIANTS="once|repeat" ROUNDS=2 timeout 200 python3 scripts/gpu/first_loads.py "$RIG" /tmp/layouts/llama.safetensors \
    /tmp/layouts/sharded.d/model.safetensors.index.json 2>&1
  date -u
} 2>&1 | tee "$O/session18.txt"
