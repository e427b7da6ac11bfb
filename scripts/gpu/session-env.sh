#!/usr/bin/env bash
# Sourced by the session scripts (scripts/gpu/session5.sh onward) on the GPU machine, from the repository
# root, with the carried build as $1: sets B (the build, absolute), O ($OUT, else /tmp) and RIG (its rig),
# puts the build's librig first on the library path, drops a counting interposer's RIG_CUDA_LIBRARY, makes
# the carried binaries executable and turns on set -u. The usage line names the sourcing script.
set -u
[ -d "${1:-}" ] || { echo "usage: $(basename "$0") BUILD (a carried build directory)" >&2; exit 2; }
B=$(cd "$1" && pwd)
O=${OUT:-/tmp}
RIG=$B/tools/rig
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" 2>/dev/null
# step LIMIT_S COMMAND...: one step of a session script, skipped once the script has run ${STEPS_UNTIL:-240}
# seconds; prints the command (with RIG_EVENT_WINDOW and RIG_TEST_KINDS where set), its last ${TAIL:-6} lines
# and its status.
step() {
  local limit=$1
  shift
  if [ $SECONDS -gt "${STEPS_UNTIL:-240}" ]; then echo "--- skipped (time): $*"; return; fi
  echo "--- $* (${RIG_EVENT_WINDOW:+RIG_EVENT_WINDOW=$RIG_EVENT_WINDOW }${RIG_TEST_KINDS:+RIG_TEST_KINDS=$RIG_TEST_KINDS})"
  local t0=$SECONDS
  timeout "$limit" "$@" > /tmp/step.log 2>&1
  local rc=$?
  tail -"${TAIL:-6}" /tmp/step.log
  echo "--- rc=$rc, $((SECONDS - t0)) s"
}
# cuda_tests: the CUDA tests of the carried build with RIG_REQUIRE=cuda (a skip fails): the calls, the floor
# through the counting interposer, the driver suite, programs and loss, the core tests that take CUDA kinds,
# the model again with the smallest event window, the loader's and the keeper's. Each a step (above).
cuda_tests() {
  local t
  export RIG_REQUIRE=cuda LD_LIBRARY_PATH=$B/tests/cuda:$LD_LIBRARY_PATH RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
  step 60 "$B/tests/cuda/test_cuda_calls"
  TAIL=40 RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so step 60 "$B/tests/cuda/test_cuda_floor"
  step 90 "$B/tests/drivers/test_driver_suite_cuda"
  step 60 "$B/tests/drivers/test_driver_programs_cuda"
  step 60 "$B/tests/drivers/test_driver_loss_cuda"
  for t in model submit_many rules; do RIG_TEST_KINDS=memory+cuda step 90 "$B/tests/core/test_$t"; done
  RIG_EVENT_WINDOW=2 RIG_TEST_KINDS=memory+cuda step 90 "$B/tests/core/test_model"
  step 60 "$B/tests/load/test_load_cuda"
  step 90 "$B/tests/keep/test_keep_gpu"
  unset RIG_REQUIRE
}
