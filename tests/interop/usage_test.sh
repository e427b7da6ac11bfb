#!/usr/bin/env bash
# The interop examples' command lines (tests/interop/nccl_step.c, ipc_pair.c, their device names parsed by
# device_names.h): each bad argument answers exit status 2 and says what is wrong; a device that does not
# open is a skip (77) saying so, or a failure (1) under RIG_REQUIRE=cuda. Runs on the fake libcuda with two
# GPUs and the fake libnccl (the environment meson gives it).
# Usage: usage_test.sh NCCL_STEP IPC_PAIR
set -u
nccl_step=${1:?usage: usage_test.sh NCCL_STEP IPC_PAIR}
ipc_pair=${2:?usage: usage_test.sh NCCL_STEP IPC_PAIR}
failures=0
# expect STATUS TEXT COMMAND...: the command exits STATUS and its stderr contains TEXT.
expect() {
  local want=$1 text=$2
  shift 2
  local err rc
  err=$(timeout 60 "$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne "$want" ] || [[ "$err" != *"$text"* ]]; then
    echo "FAIL: $* exited $rc (want $want) saying: $err (want it to contain: $text)"
    failures=$((failures + 1))
  else
    echo "ok: $* -> $rc: ${err%%$'\n'*}"
  fi
}
unset RIG_REQUIRE
expect 2 "ROUNDS is not a number" "$nccl_step" 0
expect 2 "ROUNDS is not a number" "$nccl_step" 12abc
expect 2 "ROUNDS is not a number" "$nccl_step" -- cuda:0
expect 2 '"cuda:x" is not a device name' "$nccl_step" 5 cuda:x
expect 2 '"cuda:" is not a device name' "$nccl_step" cuda:
expect 2 "vulkan:0 is not a cuda device" "$nccl_step" 5 cuda:0 vulkan:0
expect 2 "cuda:0 is named twice" "$nccl_step" 5 cuda:0 cuda:1 cuda:0
expect 2 "too many devices" "$nccl_step" 5 cuda:0 cuda:1 cuda:2 cuda:3 cuda:4 cuda:5 cuda:6 cuda:7 cuda:8
expect 77 "cuda:7 did not open" "$nccl_step" 2 cuda:0 cuda:7
RIG_REQUIRE=cuda expect 1 "cuda:7 did not open" "$nccl_step" 2 cuda:0 cuda:7
expect 2 '"cuda" is not a device name' "$ipc_pair" cuda
expect 2 "vulkan:0 is not a cuda device" "$ipc_pair" cuda:0 vulkan:0
expect 2 "usage: ipc_pair" "$ipc_pair" cuda:0 cuda:1 cuda:0
expect 77 "cuda:7" "$ipc_pair" cuda:0 cuda:7
RIG_REQUIRE=cuda expect 1 "cuda:7" "$ipc_pair" cuda:0 cuda:7
echo "usage_test: $failures failure(s)"
exit $((failures > 0))
