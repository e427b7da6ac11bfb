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
