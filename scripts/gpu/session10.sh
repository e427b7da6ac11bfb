#!/usr/bin/env bash
# Issue 32: what the loader's small copies cost through rig, one submit a copy against rig_submit_many
# batches (bench/load/copy_batches.py), at the MoE file's 3 MiB and the staging's 4 MiB.
# Usage (repository root, GPU machine): scripts/gpu/session10.sh BUILD. Writes $OUT/session10.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u
  . scripts/gpu/pyrig.sh
  timeout 120 python3 bench/load/copy_batches.py cuda:0
  COUNT=1024 SIZE=4194304 timeout 120 python3 bench/load/copy_batches.py cuda:0
  BATCH=64 timeout 120 python3 bench/load/copy_batches.py cuda:0
  date -u
} 2>&1 | tee "$O/session10.txt"
