#!/usr/bin/env bash
# A process's first load (no kept pool: the staging pool is made inside the load and goes with it) against
# the staging budget, on warm files of several sizes: what the first load's fixed time (making the pool,
# reaching the first tensor) weighs at 4 GiB against 16 GiB (issue 12's first-load goal). One `rig load`
# process per load, budgets interleaved ROUNDS times (default 3). A measurement, not a test.
# Usage (repository root, on the GPU machine): bash scripts/gpu/first_load_staging.sh BUILD [GIB...]
# Env: BUDGETS (default "16M 32M 64M 128M"), ROUNDS, EXTRA (more `rig load` options).
set -u
B=$(cd "${1:?usage: first_load_staging.sh BUILD [GIB...]}" && pwd)
shift
export LD_LIBRARY_PATH="$B:${LD_LIBRARY_PATH:-}"
unset RIG_CUDA_LIBRARY
S=$(mktemp -d /tmp/rig-fls.XXXXXX)
trap 'rm -rf "$S"' EXIT
for gib in ${*:-4 16}; do
  F=$S/w$gib.safetensors
  "$B/bench/load/bench_load" "$F" --make-gib "$gib" --make-only >/dev/null || exit 1
  sync && cat "$F" >/dev/null
  # the link in the same minutes (and the bench's own first and later staged loads beside it)
  "$B/bench/load/bench_load" "$F" --device cuda:0 --staged-only --no-cold | grep -E 'link:|rig staged' | cut -c1-200
  for r in $(seq "${ROUNDS:-3}"); do
    for b in ${BUDGETS:-16M 32M 64M 128M}; do
      # shellcheck disable=SC2086 # EXTRA split on purpose
      "$B/tools/rig" load "$F" --device cuda:0 --path staged --staging "$b" --json ${EXTRA:-} |
        python3 -c '
import json, sys
l = json.load(sys.stdin)["loads"][0]; p = l["phases"]
print("%3s GiB  staging %5s  r%s  %6.2f GB/s  %7.1f ms  first tensor %5.1f ms  read %5.3f s  staging wait %5.3f s  alloc %5.1f ms  submit %5.1f ms" % (
  sys.argv[1], sys.argv[2], sys.argv[3], l["gb_per_s"], l["seconds"] * 1e3, l["first_tensor_seconds"] * 1e3,
  p["read_seconds"], p["staging_wait_seconds"], p["alloc_seconds"] * 1e3, p["submit_seconds"] * 1e3))' "$gib" "$b" "$r"
    done
  done
  rm -f "$F"
done
