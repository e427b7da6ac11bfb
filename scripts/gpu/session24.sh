#!/usr/bin/env bash
# The seventh H200 call of 2026-12-04's fourth session: HIP through the shim over the real CUDA driver
# (tests/doubles/hip_shim) with the reuse pool as kept blocks: the loader's stream test and the HIP driver
# suite, RIG_REQUIRE=hip. The carried build needs tests/hip/libhipshim.so, tests/load/test_load_hip and
# tests/drivers/test_driver_suite_hip beside carry.sh's files.
# Usage (repository root, GPU machine): scripts/gpu/session24.sh BUILD. Writes $OUT/session24.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u
  for t in tests/load/test_load_hip tests/drivers/test_driver_suite_hip; do
    RIG_HIP_LIBRARY=$B/tests/hip/libhipshim.so RIG_REQUIRE=hip timeout 200 "$B/$t" > /tmp/step.log 2>&1
    echo "--- $t through the shim rc=$?"; grep -E "PASSED|FAILED|LINE" /tmp/step.log
  done
  date -u
} 2>&1 | tee "$O/session24.txt"
