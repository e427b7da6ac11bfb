#!/usr/bin/env bash
# Before/after of librig's loader on one GPU in the same minutes: bench_load --staged-only (the link, a
# first load, later loads through a kept pool, with where the fixed time goes) through each LIBDIR's
# librig.so.0 in turn (LD_LIBRARY_PATH comes before bench_load's RUNPATH), interleaved ROUNDS times
# (default 3) on one warm file of LOAD_GIB GiB (default 8). An entry LIBDIR:ARGS also gives bench_load
# ARGS, commas for spaces (build/ab/x:--staging-mib,128), to compare settings through one library.
# Usage (repository root, on the GPU machine): scripts/gpu/load_ab.sh BUILD_DIR LIBDIR[:ARGS]...
# FIRST_CLI=1: after each bench run, one `rig load --json` process through the same library too (a first
# load with no kept pool, its milestones by RIG_LOAD_TRACE=1), into the same log and summary.
# LOAD_TENSOR_KIB=N: the file's tensors are of N KiB (bench_load --tensor-kib) instead of 64 MiB.
# Writes $OUT/load-ab/<entry's name>-<round>.log and the staged rows of every run in summary.txt.
set -u
B=$(cd "${1:?usage: scripts/gpu/load_ab.sh BUILD_DIR LIBDIR...}" && pwd)
shift
L=${OUT:-/tmp/out}/load-ab
mkdir -p "$L"
S=$(mktemp -d /tmp/rig-ab.XXXXXX)
trap 'rm -rf "$S"' EXIT
F=$S/weights.safetensors
unset RIG_CUDA_LIBRARY
"$B/bench/load/bench_load" "$F" --make-gib "${LOAD_GIB:-8}" ${LOAD_TENSOR_KIB:+--tensor-kib "$LOAD_TENSOR_KIB"} --make-only > "$L/make.log" 2>&1 || { cat "$L/make.log"; exit 1; }
for r in $(seq "${ROUNDS:-3}"); do
  for entry in "$@"; do
    lib=${entry%%:*}
    args=""
    [ "$lib" != "$entry" ] && args=${entry#*:}
    name=$(basename "$lib")${args:+-${args//[^a-z0-9]/}}
    # shellcheck disable=SC2086 # ARGS split at the commas, on purpose
    LD_LIBRARY_PATH="$(cd "$lib" && pwd):$B" timeout 120 "$B/bench/load/bench_load" "$F" --staged-only --no-cold \
      ${args//,/ } > "$L/$name-$r.log" 2>&1
    grep -E 'link:|rig staged' "$L/$name-$r.log" | sed "s|^|$name r$r |" | cut -c1-260 | tee -a "$L/summary.txt"
    if [ "${FIRST_CLI:-0}" = 1 ]; then
      LD_LIBRARY_PATH="$(cd "$lib" && pwd):$B" RIG_LOAD_TRACE=1 timeout 60 "$B/tools/rig" load "$F" --device cuda:0 --json \
        > "$L/$name-$r-cli.json" 2> "$L/$name-$r-cli.trace"
      python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["loads"][0]; print("cli first load %.2f GB/s, first tensor %.1f ms, %s" % (l["gb_per_s"], l["first_tensor_seconds"]*1e3, l["path"]))' \
        "$L/$name-$r-cli.json" 2>&1 | sed "s|^|$name r$r |" | tee -a "$L/summary.txt"
      sed "s|^|$name r$r |" "$L/$name-$r-cli.trace" | tee -a "$L/summary.txt"
    fi
  done
done
