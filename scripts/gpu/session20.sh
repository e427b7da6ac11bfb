#!/usr/bin/env bash
# The second H200 call of 2026-12-04's fourth session: the staged path's ramp (make_plan: each device's
# first chunks 256 KiB, 512 KiB, 1 MiB, 2 MiB) against whole first chunks (RIG_LOAD_RAMP=0), once and
# --repeat 3, on the four layouts, three rounds interleaved (first_loads.py, with the first tensor's time);
# then rig.load_file against rig load (bench/load/python_rows.py, two rounds, uniform, MoE and Llama-like).
# The ramp moved nothing past the spread and was taken back (its variants left first_loads.py with it).
# Usage (repository root, GPU machine): scripts/gpu/session20.sh BUILD. Writes $OUT/session20.txt.
. scripts/gpu/session-env.sh "${1:-}"
L=/tmp/layouts
{
  date -u
  ROUNDS=0 timeout 150 python3 bench/load/layouts.py "$RIG" $L "$B" 2>&1 | tail -4
  echo "=== first loads, the ramp on and off"
  VARIANTS="once|once, RIG_LOAD_RAMP=0|repeat|repeat, RIG_LOAD_RAMP=0" ROUNDS=3 timeout 300 python3 scripts/gpu/first_loads.py \
    "$RIG" $L/uniform.safetensors $L/moe.safetensors $L/llama.safetensors $L/sharded.d/model.safetensors.index.json 2>&1
  echo "=== rig.load_file against rig load"
  . scripts/gpu/pyrig.sh
  ROUNDS=2 timeout 200 python3 bench/load/python_rows.py "$RIG" $L/uniform.safetensors $L/moe.safetensors $L/llama.safetensors 2>&1
  date -u
} 2>&1 | tee "$O/session20.txt"
