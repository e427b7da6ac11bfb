#!/usr/bin/env bash
# The fifth H200 call of 2026-12-04's fourth session: cold loads on the four layouts (bench/load/
# cold_layouts.py: dd O_DIRECT, a buffered dd, rig load, safetensors.load_file, each after the files were
# evicted, two rounds interleaved), and where rig.load_file's time goes on the Llama-like file
# (py_phases.py, three runs).
# Usage (repository root, GPU machine): scripts/gpu/session22.sh BUILD. Writes $OUT/session22.txt.
. scripts/gpu/session-env.sh "${1:-}"
L=/tmp/layouts
{
  date -u; df -h /tmp | tail -1
  ROUNDS=0 timeout 150 python3 bench/load/layouts.py "$RIG" $L "$B" 2>&1 | tail -4
  echo "=== cold loads"
  ROUNDS=2 timeout 330 python3 bench/load/cold_layouts.py "$RIG" $L/uniform.safetensors $L/llama.safetensors \
    $L/moe.safetensors $L/sharded.d/model.safetensors.index.json 2>&1
  echo "=== rig.load_file's steps, Llama-like"
  . scripts/gpu/pyrig.sh
  for r in 1 2 3; do timeout 60 python3 scripts/gpu/py_phases.py $L/llama.safetensors 2>&1 | tail -2; done
  date -u
} 2>&1 | tee "$O/session22.txt"
