#!/usr/bin/env bash
# The session's closing H200 call, one script for every figure the note reports (issues 32, 34, 35), most
# valuable first: the driver-call table per chained operation on the real driver (the counting interposer,
# tests/doubles/count_cuda, under cuda-floor), the CUDA tests the session touched with RIG_REQUIRE=cuda
# (the driver suite, the model test with batches over CUDA kinds, rig_submit_many, the loader on CUDA),
# bench/cuda's chain with the batch rows, a keeper on CUDA where the build has one, then issue 32's Python
# and layout rows (scripts/gpu/issue32.sh's parts) and the reuse pool on and off.
# Usage (repository root, on the GPU machine): scripts/gpu/final.sh BUILD   Writes $OUT/final.txt.
set -u
B=$(cd "${1:?usage: final.sh BUILD}" && pwd)
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:$B/tests/cuda:${LD_LIBRARY_PATH:-} RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" 2>/dev/null
run() {  # LIMIT_S COMMAND...: one step, its last lines and its status
  local limit=$1
  shift
  echo "--- $*"
  timeout "$limit" "$@" > /tmp/step.log 2>&1
  local rc=$?
  tail -${TAIL:-12} /tmp/step.log
  echo "--- rc=$rc"
}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "=== driver calls per chained operation, real driver (count interposer)"
  TAIL=60 RIG_REQUIRE=cuda RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so run 60 "$B/tests/cuda/test_cuda_floor"
  echo "=== CUDA tests (RIG_REQUIRE=cuda)"
  export RIG_REQUIRE=cuda
  run 90 "$B/tests/drivers/test_driver_suite_cuda"
  run 60 "$B/tests/load/test_load_cuda"
  for t in submit_many model one_program rules; do
    [ -x "$B/tests/core/test_$t" ] && RIG_TEST_KINDS=memory+cuda run 90 "$B/tests/core/test_$t"
  done
  unset RIG_REQUIRE
  echo "=== bench/cuda chain (2048 ops, ${CHAIN_ROUNDS:-51} rounds)"
  timeout 200 "$B/bench/cuda/bench_cuda_chain" 2048 "${CHAIN_ROUNDS:-51}" > /tmp/chain.log 2>&1
  echo "rc=$?"; grep -E "ratio|edge|\((a|a16|b|b16|br|d)\) " /tmp/chain.log
  if [ -x "$B/tests/keep/test_keep_gpu" ]; then
    echo "=== keeper on CUDA"
    RIG_REQUIRE=cuda TAIL=30 run 120 "$B/tests/keep/test_keep_gpu"
  fi
} 2>&1 | tee "${OUT:-/tmp}/final.txt"
# issue 32: Python with torch, the layouts with phases, Python's rows
bash scripts/gpu/issue32.sh "$B" > /dev/null 2>&1
cat "${OUT:-/tmp}/issue32.txt" >> "${OUT:-/tmp}/final.txt"
{
  echo "=== reuse pool on and off (uniform, rig load --repeat 3)"
  for r in 1 2; do
    for v in 1 0; do
      RIG_REUSE_POOL=$v "$B/tools/rig" load /tmp/layouts/uniform.safetensors --device cuda:0 --repeat 3 --json |
        python3 -c 'import json,sys; print("RIG_REUSE_POOL='$v'", [round(l["gb_per_s"],1) for l in json.load(sys.stdin)["loads"]])'
    done
  done
} 2>&1 | tee -a "${OUT:-/tmp}/final.txt"
