#!/usr/bin/env bash
# Issue 12's slow first load, taken apart on a GPU machine: first_load_probe.cu (the staged path's shape
# without rig, pass by pass) and `rig load --json --repeat 3` in several processes, on one 8 GiB file.
# Usage (repository root, on the GPU machine): scripts/gpu/first_load.sh BUILD_DIR. Logs under $OUT/first_load/.
set -u
B=$(cd "${1:?usage: scripts/gpu/first_load.sh BUILD_DIR}" && pwd)
L=${OUT:-/tmp/out}/first_load
mkdir -p "$L"
export LD_LIBRARY_PATH="$B:${LD_LIBRARY_PATH:-}"
unset RIG_CUDA_LIBRARY
S=$(mktemp -d /tmp/rig-fl.XXXXXX)
trap 'rm -rf "$S"' EXIT
F=$S/w.safetensors
{
  date -u
  cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>&1
  grep -E 'MemFree|Cached|Dirty|Writeback|AnonHuge' /proc/meminfo
  nvcc -O2 -o "$S/flp" scripts/gpu/first_load_probe.cu || echo "probe: compile failed"
  "$B/bench/load/bench_load" "$F" --make-gib "${LOAD_GIB:-8}" --make-only
  sync; cat "$F" >/dev/null; grep -E 'Dirty|Writeback' /proc/meminfo
  summary() { grep -o '"gb_per_s": [0-9.]*\|"read_seconds": [0-9.]*\|"staging_wait_seconds": [0-9.]*' | paste - - - ; }
  for r in 1 2; do echo "== rig load, process $r"; "$B/tools/rig" load "$F" --device cuda:0 --json --repeat 3 | summary; done
  for r in 1 2; do echo "== probe, process $r"; timeout 120 "$S/flp" "$F" 12 4 16; done
  echo "== probe, 32 slots"; timeout 120 "$S/flp" "$F" 12 4 32
  for r in 3 4; do echo "== rig load, process $r"; "$B/tools/rig" load "$F" --device cuda:0 --json --repeat 3 | summary; done
  echo "== rig load, 128 MiB staging"; "$B/tools/rig" load "$F" --device cuda:0 --json --repeat 3 --staging 128M | summary
  grep -E 'AnonHuge' /proc/meminfo; date -u
} 2>&1 | tee "$L/log.txt"
