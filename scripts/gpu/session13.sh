#!/usr/bin/env bash
# The H200 calls of 2026-12-04's third session. Part f: the stream device's hand-over without a context query
# on the real driver: test_cuda_floor through the counting interposer (whether the driver takes calls naming
# rig's stream with no context current, and the calls per operation), and the CUDA, loader and keeper tests
# with RIG_REQUIRE=cuda. Part c: bench/cuda's chain, libA (main before: a query per hand-over) and this build
# interleaved, two runs each of 51 rounds. Part m: what a mark after each 4 MiB staged copy costs the link
# (scripts/gpu/mark_cost.py). Part p: where rig.load_file's time goes beside rig load's (py_phases.py).
# Usage (repository root, GPU machine): scripts/gpu/session13.sh BUILD [PARTS] (default "f c m p").
# Writes $OUT/session13.txt.
. scripts/gpu/session-env.sh "${1:-}"
PARTS=${2:-f c m p}
run() {  # TIMEOUT COMMAND...: its last lines and its status
  local t=$1; shift
  timeout "$t" "$@" > /tmp/step.log 2>&1; local rc=$?
  echo "--- $(basename "$1") rc=$rc"; grep -E "PASSED|FAILED|SKIPPED|\[  (FAILED|SKIPPED) |skip|SKIP" /tmp/step.log | head -8
}
chain_summary() { grep -E "^  \(a\)|^  \(b\) |^  \(d\) |ratio wall  a/b|ratio host  a/d|ratio wall b2/b|cross-device edge|rig's own part|a16/b16|ratio wall a/br|ratio .* a/br|^[a-z0-9 ]+KiB|^tiny|^4 KiB"; }
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  if [[ $PARTS == *f* ]]; then
    echo "=== test_cuda_floor on the real driver through the counting interposer (RIG_REQUIRE=cuda)"
    RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIG_REQUIRE=cuda timeout 120 "$B/tests/cuda/test_cuda_floor" 2>&1 |
      grep -vE "^\s*$" | head -80
    echo "=== CUDA tests (RIG_REQUIRE=cuda)"
    export RIG_REQUIRE=cuda
    run 120 "$B/tests/cuda/test_cuda_calls"
    run 120 "$B/tests/cuda/test_cuda_floor"
    run 120 "$B/tests/load/test_load_cuda"
    run 120 "$B/tests/keep/test_keep_gpu"
    unset RIG_REQUIRE
  fi
  if [[ $PARTS == *c* ]]; then
    for r in 1 2; do
      for lib in "$B/libA" "$B"; do
        echo "=== bench/cuda chain 2048 51 1, round $r, $(basename "$lib")"
        LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 150 "$B/bench/cuda/bench_cuda_chain" 2048 51 1 2>&1 | chain_summary
      done
    done
  fi
  if [[ $PARTS == *m* ]]; then
    echo "=== mark cost"
    timeout 120 python3 scripts/gpu/mark_cost.py 4 1024 2>&1 | tail -3
    timeout 60 python3 scripts/gpu/mark_cost.py 16 256 2>&1 | tail -2
  fi
  if [[ $PARTS == *p* ]]; then
    echo "=== rig.load_file's steps (py_phases.py) against rig load, uniform and MoE files"
    . scripts/gpu/pyrig.sh
    LAYOUTS="uniform moe" ROUNDS=1 timeout 200 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | tail -6
    for r in 1 2; do
      for f in /tmp/layouts/uniform.safetensors /tmp/layouts/moe.safetensors; do
        "$RIG" load "$f" --device cuda:0 --json | python3 -c 'import json,sys; l=json.load(sys.stdin)["loads"][0]; print("  rig load first: %.1f ms %.1f GB/s" % (l["seconds"]*1e3, l["gb_per_s"]))'
        timeout 60 python3 scripts/gpu/py_phases.py "$f" 2>&1 | tail -2
      done
    done
  fi
  date -u
} 2>&1 | tee "$O/session13.txt"
