#!/usr/bin/env bash
# The second H200 call of 2026-12-04's third session. Part k: a first load by how the process loads
# (first_loads.py: once, --repeat with the reuse pool, without it, on the memory-operation timeline). Part p:
# rig.load_file's steps (py_phases.py) with the event ring made lazily and the tensors read in one call.
# Part m: what a mark after each staged copy costs (mark_cost.py). Part f: test_cuda_floor through the
# counting interposer and the CUDA tests with RIG_REQUIRE=cuda.
# Usage (repository root, GPU machine): scripts/gpu/session14.sh BUILD [PARTS] (default "k p m f").
# Writes $OUT/session14.txt.
. scripts/gpu/session-env.sh "${1:-}"
PARTS=${2:-k p m f}
U=/tmp/layouts/uniform.safetensors M=/tmp/layouts/moe.safetensors
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  LAYOUTS="uniform moe" ROUNDS=0 timeout 120 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | tail -3
  if [[ $PARTS == *k* ]]; then
    echo "=== first loads by how the process loads"
    ROUNDS=2 timeout 240 python3 scripts/gpu/first_loads.py "$RIG" $U $M 2>&1
  fi
  if [[ $PARTS == *p* ]]; then
    echo "=== rig.load_file's steps against rig load"
    . scripts/gpu/pyrig.sh
    for r in 1 2; do
      for f in $U $M; do
        "$RIG" load "$f" --device cuda:0 --json | python3 -c 'import json,sys; l=json.load(sys.stdin)["loads"][0]; print("  rig load first: %.1f ms %.1f GB/s" % (l["seconds"]*1e3, l["gb_per_s"]))'
        timeout 60 python3 scripts/gpu/py_phases.py "$f" 2>&1 | tail -2
      done
    done
  fi
  if [[ $PARTS == *m* ]]; then
    echo "=== mark cost"
    timeout 120 python3 scripts/gpu/mark_cost.py 4 1024 2>&1 | tail -6
  fi
  if [[ $PARTS == *f* ]]; then
    echo "=== test_cuda_floor through the counting interposer, and the CUDA tests (RIG_REQUIRE=cuda)"
    RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIG_REQUIRE=cuda timeout 120 "$B/tests/cuda/test_cuda_floor" 2>&1 |
      grep -E "caller|get_current|set_current|event_create|OK|FAILED|SKIP|PASSED"
    for t in tests/cuda/test_cuda_calls tests/load/test_load_cuda tests/keep/test_keep_gpu; do
      RIG_REQUIRE=cuda timeout 120 "$B/$t" > /tmp/step.log 2>&1
      echo "--- $t rc=$?"; grep -E "PASSED|FAILED" /tmp/step.log
    done
  fi
  date -u
} 2>&1 | tee "$O/session14.txt"
