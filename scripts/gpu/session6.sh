#!/usr/bin/env bash
# The second H200 call of 2026-12-04's second session (issue 32). The caller's pool grown behind: `rig load`'s
# first load in a fresh process, and whether the data's alignment in the file moves the loads (files written
# by safetensors.torch.save_file start their data 8-byte aligned): the copies alone at four source offsets,
# then each file and its 4 KiB-aligned twin loaded in turn, three rounds.
# Usage (repository root, GPU machine): scripts/gpu/session6.sh BUILD. Writes $OUT/session6.txt.
. scripts/gpu/session-env.sh "${1:-}"
load() {  # FILE EXTRA...: one fresh `rig load --repeat 3 --json`: each load's GB/s and ms on one line
  local f=$1; shift
  "$RIG" load "$f" --device cuda:0 --repeat 3 --json "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("  " + "  ".join("%.1f GB/s %.1f ms (wait %.3f alloc %.1f)" % (l["gb_per_s"], l["seconds"] * 1e3,
      l["phases"]["staging_wait_seconds"], l["phases"]["alloc_seconds"] * 1e3) for l in d["loads"]))'
}
{
  date -u
  echo "=== files (layouts.py writes them; one round)"
  LAYOUTS="uniform moe" ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | tail -4
  U=/tmp/layouts/uniform.safetensors M=/tmp/layouts/moe.safetensors
  echo "=== alignment: copies alone, and the aligned twins"
  timeout 120 python3 scripts/gpu/align.py $U $M
  cat $U.aligned $M.aligned > /dev/null
  for r in 1 2 3; do
    for f in $U $U.aligned $M $M.aligned; do
      echo "--- round $r $(basename $f)"; load $f; load $f --keep-registered
    done
  done
  date -u
} 2>&1 | tee "$O/session6.txt"
