#!/usr/bin/env bash
# The H200 call of 2026-12-03's third session, one script: issue 35's driver-call table on the real driver
# (a batch of copies seen before now a graph launch), the CUDA tests with RIG_REQUIRE=cuda, bench/cuda's
# chain from three builds interleaved (dcf5a35 of 2026-11-30, main before copy graphs, this build), and
# issue 36's program on every pair of the devices present (scripts/gpu/issue36.sh).
# Usage (repository root, GPU machine): scripts/gpu/session3.sh BUILD AB_DIR   AB_DIR holds old/ and main/
# with their bench_cuda_chain. Writes $OUT/session3.txt and $OUT/chain-*.log.
set -u
B=$(cd "${1:?usage: session3.sh BUILD AB_DIR}" && pwd)
AB=$(cd "${2:?usage: session3.sh BUILD AB_DIR}" && pwd)
O=${OUT:-/tmp}
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:$B/tests/cuda:${LD_LIBRARY_PATH:-} RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" "$AB" 2>/dev/null
run() {  # LIMIT_S COMMAND...: one step, its last lines and its status
  local limit=$1
  shift
  echo "--- $*"
  timeout "$limit" "$@" > /tmp/step.log 2>&1
  local rc=$?
  tail -${TAIL:-8} /tmp/step.log
  echo "--- rc=$rc"
}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  echo "=== driver calls per chained operation and per batch, real driver (count interposer)"
  TAIL=90 RIG_REQUIRE=cuda RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so run 60 "$B/tests/cuda/test_cuda_floor"
  echo "=== CUDA tests (RIG_REQUIRE=cuda)"
  export RIG_REQUIRE=cuda
  run 90 "$B/tests/drivers/test_driver_suite_cuda"
  for t in submit_many model one_program rules; do
    [ -x "$B/tests/core/test_$t" ] && RIG_TEST_KINDS=memory+cuda run 120 "$B/tests/core/test_$t"
  done
  unset RIG_REQUIRE
  echo "=== bench/cuda chain, 2048 ops, ${CHAIN_ROUNDS:-101} rounds: old (dcf5a35), main (2c87d61), new, interleaved"
  for r in 1 2; do
    for b in old main new; do
      exe=$AB/$b/bench_cuda_chain
      [ $b = new ] && exe=$B/bench/cuda/bench_cuda_chain
      timeout 150 "$exe" 2048 "${CHAIN_ROUNDS:-101}" > "$O/chain-$b-$r.log" 2>&1
      echo "$b r$r rc=$?"
      grep -E "ratio (wall|host) +(a/b|a/d|a16/b16|a/br) |edge, host" "$O/chain-$b-$r.log" | cut -c1-110 | sed "s|^|$b r$r |"
    done
  done
} 2>&1 | tee "$O/session3.txt"
echo "=== issue 36: every pair of the devices present" | tee -a "$O/session3.txt"
timeout 420 bash scripts/gpu/issue36.sh "$B" 2>&1 | tee -a "$O/session3.txt"
