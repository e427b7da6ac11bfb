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
# say_machine: the date, the GPU and its driver, the cores and the CPU: the first lines of a session's log.
say_machine() {
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; grep -m1 "model name" /proc/cpuinfo
}
# The A/B scripts (session32.sh on) name each build's statically linked bench_cuda_chain in the associative array
# `bench` (NAME -> path), which they declare. chain NAME ROUNDS LOG: that build's chain (2048 ops a pass, ROUNDS
# rounds, one GPU) into $O/LOG; prints its status and seconds, and its ratio, edge, own-time and main rows, each
# line led by NAME.
chain() {
  local t0=$SECONDS
  timeout 150 "${bench[$1]}" 2048 "$2" 1 > "$O/$3" 2>&1
  echo "$1: rc=$?, $((SECONDS - t0)) s"
  grep -E "ratio|edge|own time|^  \((a|a1|b|d|d1)\) |^=== " "$O/$3" | sed "s|^|  $1 |"
}
# interleaved ROUNDS EACH WHAT NAME...: each NAME's chain in turn (EACH rounds a chain), ROUNDS times, logged as
# WHAT-NAME-R.log. With RIG_CUDA_LIBRARY and RIGCOUNT_TIME=1 set for the call, through the timing interposer.
interleaved() {
  local rounds=$1 each=$2 what=$3 r b
  shift 3
  for r in $(seq "$rounds"); do
    for b in "$@"; do
      echo "=== $what: chain 2048 $each 1, $b, round $r"
      chain "$b" "$each" "$what-$b-$r.log"
    done
  done
}
# timed ROUNDS EACH NAME...: interleaved through the timing interposer (rig's own time over its calls by hand).
timed() {
  RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so RIGCOUNT_TIME=1 interleaved "$1" "$2" timed "${@:3}"
}
# pack_logs: the chains' logs under $O into one logs.tgz (a call brings back only a few files).
pack_logs() { (cd "$O" && tar czf logs.tgz ./*.log && rm -f ./*.log); }
