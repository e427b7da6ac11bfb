#!/usr/bin/env bash
# The sixth H200 call of 2026-12-04's fourth session: the shape of rig's cold reads against dd O_DIRECT on
# this machine's disk (scripts/gpu/cold_shapes.py: reader threads and chunk varied, two rounds, the uniform
# and Llama-like files).
# Usage (repository root, GPU machine): scripts/gpu/session23.sh BUILD. Writes $OUT/session23.txt.
. scripts/gpu/session-env.sh "${1:-}"
L=/tmp/layouts
{
  date -u
  LAYOUTS="uniform llama" ROUNDS=0 timeout 150 python3 bench/load/layouts.py "$RIG" $L "$B" 2>&1 | tail -2
  ROUNDS=2 timeout 400 python3 scripts/gpu/cold_shapes.py "$RIG" $L/uniform.safetensors $L/llama.safetensors 2>&1
  date -u
} 2>&1 | tee "$O/session23.txt"
