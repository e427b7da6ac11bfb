#!/usr/bin/env bash
# Issue 32: whether the page cache a file's writer left behind moves a load, against the same file evicted
# and read back (the page cache a user's model file has after its first read from disk: readahead's folios).
# Usage (repository root, GPU machine): scripts/gpu/session7.sh BUILD. Writes $OUT/session7.txt.
. scripts/gpu/session-env.sh "${1:-}"
load() {
  local f=$1; shift
  "$RIG" load "$f" --device cuda:0 --repeat 3 --json "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("  " + "  ".join("%.1f GB/s %.1f ms" % (l["gb_per_s"], l["seconds"] * 1e3) for l in d["loads"]))'
}
evict_and_read() {  # FILE: out of the page cache, then read back once (cat: readahead)
  sync; python3 -c 'import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)' "$1"
  cat "$1" > /dev/null
}
{
  date -u; uname -r; df -T /tmp | tail -1; grep -i "AnonHugePages\|FileHugePages" /proc/meminfo
  LAYOUTS="uniform moe" ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | tail -4
  U=/tmp/layouts/uniform.safetensors M=/tmp/layouts/moe.safetensors
  for f in $U $M; do
    echo "--- $(basename $f) as its writer left it in the page cache"; load $f; load $f --keep-registered
    evict_and_read $f
    echo "--- $(basename $f) evicted and read back"; load $f; load $f --keep-registered
  done
  python3 -c "
import torch, time
src = torch.empty(1 << 30, dtype=torch.uint8).pin_memory(); dst = torch.empty(1 << 30, dtype=torch.uint8, device='cuda:0')
dst.copy_(src, non_blocking=True); torch.cuda.synchronize(); best = 0
for _ in range(3):
    t0 = time.perf_counter(); dst.copy_(src, non_blocking=True); torch.cuda.synchronize(); best = max(best, (1 << 30) / (time.perf_counter() - t0) / 1e9)
print('link %.2f GB/s' % best)"
  for r in 2 3; do
    for f in $U $M; do
      echo "--- round $r $(basename $f) read back"; load $f; load $f --keep-registered
    done
  done
  echo "--- bench_load on its own 4 GiB file"
  timeout 120 "$B/bench/load/bench_load" /tmp/bl.safetensors --device cuda:0 --make-gib 4 --staged-only 2>&1 | grep -i "link\|rig"
  date -u
} 2>&1 | tee "$O/session7.txt"
