#!/usr/bin/env bash
# Issue 32: the loader's staged copies batched or not, interleaved (layouts.py, two rounds): libA before any
# batching, libB batches of at most a quarter of the staging pool (a window's copies 16 a submit), libC the
# windows batched and the staged copies one a submit.
# Usage (repository root, GPU machine): scripts/gpu/session12.sh BUILD. Writes $OUT/session12.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u
  LAYOUTS="uniform moe" ROUNDS=2 timeout 400 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts \
    "$B/libA" "$B/libB" "$B/libC" 2>&1 | grep -v "^ *$"
  date -u
} 2>&1 | tee "$O/session12.txt"
