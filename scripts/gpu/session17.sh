#!/usr/bin/env bash
# The fifth H200 call of 2026-12-04's third session: rig.load_file against rig load with the device opened
# beside the file (bench/load/python_rows.py, three rounds, uniform and MoE), and py_phases.py's steps.
# Usage (repository root, GPU machine): scripts/gpu/session17.sh BUILD. Writes $OUT/session17.txt.
. scripts/gpu/session-env.sh "${1:-}"
U=/tmp/layouts/uniform.safetensors M=/tmp/layouts/moe.safetensors
{
  date -u
  LAYOUTS="uniform moe" ROUNDS=0 timeout 120 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | tail -2
  . scripts/gpu/pyrig.sh
  ROUNDS=3 timeout 300 python3 bench/load/python_rows.py "$RIG" $U $M 2>&1
  for f in $U $M; do timeout 60 python3 scripts/gpu/py_phases.py "$f" 2>&1 | tail -1; done
  date -u
} 2>&1 | tee "$O/session17.txt"
