#!/usr/bin/env bash
# Issue 32, after the loader's copies go in batches (load/copier.h): its CUDA test and the keeper's with
# RIG_REQUIRE=cuda, a verified load of the MoE file (each copy read back), and every 4 GiB layout
# (layouts.py, two rounds).
# Usage (repository root, GPU machine): scripts/gpu/session11.sh BUILD. Writes $OUT/session11.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u
  for t in "$B/tests/load/test_load_cuda" "$B/tests/keep/test_keep_gpu"; do
    RIG_REQUIRE=cuda timeout 120 "$t" > /tmp/step.log 2>&1; echo "--- $(basename $t) rc=$?"; grep -E "PASSED|FAILED" /tmp/step.log
  done
  echo "=== every layout, 4 GiB (layouts.py, two rounds)"
  LAYOUTS="uniform llama moe" ROUNDS=2 timeout 200 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | grep -v "^ *$"
  echo "=== a verified load of the MoE file"
  timeout 120 "$RIG" load /tmp/layouts/moe.safetensors --device cuda:0 --verify 2>&1 | tail -4; echo "rc=$?"
  date -u
} 2>&1 | tee "$O/session11.txt"
