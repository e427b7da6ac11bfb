#!/usr/bin/env bash
# The first H200 call of 2026-12-04's fourth session: the reuse pool as blocks of plain memory the device
# keeps (stream/reuse_pool.cpp) against the CUDA memory pool it replaced. Part t: the loader's and keeper's
# tests with RIG_REQUIRE=cuda, and the loader's through the counting interposer (its allocation counts on
# the real driver). Part l: bench/load/layouts.py on the four layouts, the library before (BUILD/before) and
# this one interleaved, ROUNDS rounds. Part f: first_loads.py once and --repeat 3 on this library.
# Part p: each load's phases on the Llama-like and MoE files (layouts.py PHASES=1, this library).
# Usage (repository root, GPU machine): scripts/gpu/session19.sh BUILD [PARTS] (default "t l f p").
# Writes $OUT/session19.txt.
. scripts/gpu/session-env.sh "${1:-}"
PARTS=${2:-t l f p}
L=/tmp/layouts
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  if [[ $PARTS == *t* ]]; then
    echo "=== tests (RIG_REQUIRE=cuda)"
    for t in tests/load/test_load_cuda tests/keep/test_keep_gpu tests/cuda/test_cuda_calls; do
      RIG_REQUIRE=cuda timeout 120 "$B/$t" > /tmp/step.log 2>&1
      echo "--- $t rc=$?"; grep -E "PASSED|FAILED|SKIP" /tmp/step.log
    done
    RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIG_REQUIRE=cuda timeout 120 "$B/tests/load/test_load_cuda" > /tmp/step.log 2>&1
    echo "--- test_load_cuda through the counting interposer rc=$?"; grep -E "PASSED|FAILED|SKIP|LINE" /tmp/step.log
  fi
  if [[ $PARTS == *l* ]]; then
    echo "=== layouts: before (the CUDA memory pool) and after (kept blocks), interleaved"
    ROUNDS=${ROUNDS:-2} timeout 420 python3 bench/load/layouts.py "$RIG" $L "$B/before" "$B" 2>&1
  fi
  if [[ $PARTS == *f* ]]; then
    echo "=== first loads, once and --repeat 3"
    VARIANTS="once|repeat" ROUNDS=2 timeout 200 python3 scripts/gpu/first_loads.py "$RIG" $L/uniform.safetensors \
      $L/moe.safetensors $L/llama.safetensors $L/sharded.d/model.safetensors.index.json 2>&1
  fi
  if [[ $PARTS == *p* ]]; then
    echo "=== each load's phases, Llama-like and MoE, this library"
    LAYOUTS="llama moe" ROUNDS=1 PHASES=1 timeout 200 python3 bench/load/layouts.py "$RIG" $L "$B" 2>&1
  fi
  date -u
} 2>&1 | tee "$O/session19.txt"
