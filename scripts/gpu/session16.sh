#!/usr/bin/env bash
# The fourth H200 call of 2026-12-04's third session: where a one-shot first load's first 7 ms go (issue 32:
# its first tensor comes 6.6-8.2 ms in). Each file loaded once in a fresh `rig load`, traced
# (RIG_LOAD_TRACE=1), three times, and once with a second fresh process right after.
# Usage (repository root, GPU machine): scripts/gpu/session16.sh BUILD. Writes $OUT/session16.txt.
. scripts/gpu/session-env.sh "${1:-}"
U=/tmp/layouts/uniform.safetensors M=/tmp/layouts/moe.safetensors
{
  date -u
  LAYOUTS="uniform moe" ROUNDS=0 timeout 120 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | tail -2
  for r in 1 2 3; do
    for f in $U $M; do
      echo "--- $(basename $f) round $r"
      RIG_LOAD_TRACE=1 "$RIG" load "$f" --device cuda:0 --json 2> /tmp/trace.txt | python3 -c '
import json, sys
l = json.load(sys.stdin)["loads"][0]; p = l["phases"]
print("  %.1f GB/s %.1f ms, first tensor %.1f ms, read %.3f s, staging wait %.3f s, alloc %.1f ms, submit %.1f ms" % (
    l["gb_per_s"], l["seconds"] * 1e3, l["first_tensor_seconds"] * 1e3, p["read_seconds"], p["staging_wait_seconds"],
    p["alloc_seconds"] * 1e3, p["submit_seconds"] * 1e3))'
      grep -i "trace\|ms" /tmp/trace.txt | sed 's/^/    /' | head -14
    done
  done
  echo "--- strace -c of one load (syscalls by time)"
  strace -f -c -o /tmp/strace.txt "$RIG" load $U --device cuda:0 > /dev/null 2>&1; head -20 /tmp/strace.txt
  date -u
} 2>&1 | tee "$O/session16.txt"
