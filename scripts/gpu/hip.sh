#!/usr/bin/env bash
# The HIP driver on a real NVIDIA GPU, through the shim that exports the hip* entry points over the CUDA
# driver API (tests/doubles/hip_shim): RIG_HIP_LIBRARY=<build>/tests/hip/libhipshim.so, RIG_REQUIRE=hip (a
# test that would skip fails instead). Usage: scripts/gpu/hip.sh BUILD_DIR. Runs from the repo root; writes
# logs under $OUT/hip/. Every step has a timeout; a failing step does not stop the others; the summary at the
# end says which failed. Nothing here runs on AMD hardware: that needs a machine with ROCm (docs/hip.md).
set -u
B=$(cd "${1:?usage: hip.sh BUILD_DIR}" && pwd)
L=${OUT:-/tmp/out}/hip
mkdir -p "$L"
export LD_LIBRARY_PATH="$B:${LD_LIBRARY_PATH:-}"   # librig and the carried libcmocka.so.0
SHIM=$B/tests/hip/libhipshim.so
FAKE=$B/tests/hip/libfakehip.so
summary=()
step() {  # step NAME LIMIT_S CMD...: runs CMD with a timeout, logs to $L/NAME.log, records rc
  local name=$1 limit=$2
  shift 2
  echo "== $name: $*" | tee -a "$L/all.log"
  local t0=$(date +%s.%N)
  timeout -k 5 "$limit" "$@" >"$L/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  cat "$L/$name.log" >>"$L/all.log"
  # cmocka's counts, for pasting: passed / failed / skipped cases of the step
  local counts
  counts=$(awk '/^\[  PASSED  \] [0-9]+ test/{p+=$4} /^\[  FAILED  \] [0-9]+ test/{f+=$4} /^\[  SKIPPED \] [0-9]+ test/{k+=$4}
                END{if (p+f+k) printf "passed %d failed %d skipped %d", p, f, k}' "$L/$name.log")
  printf -v line '%-34s rc=%-3s %6.1f s  %s' "$name" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" "$counts"
  echo "$line" | tee -a "$L/all.log"
  summary+=("$line")
}

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv; uname -r; ls -l "$SHIM" "$FAKE"; } \
  >"$L/machine.log" 2>&1

if [ ! -f "$SHIM" ]; then
  echo "no $SHIM: build the tests (meson -Dtests=true) in $B" | tee -a "$L/all.log"
  exit 1
fi

# scripts/gpu/all.sh gives this script about 150 s: the steps run most telling first, with limits that fit.
# 1. What rig lists through the shim: hip:N beside cuda:N, the same GPUs.
step devices 10 env RIG_HIP_LIBRARY="$SHIM" "$B/tools/rig" devices

export RIG_REQUIRE=hip
# 2. The driver suite through the shim (stream memory operations), then mapped registration (Usable on a
#    disk file, PROT_NONE never registered, the table refusing twice/overlapping before the runtime; the
#    fake-only cases say SKIP in the log), the loader's reuse pool, then the ordering suite over HIP devices.
step driver-shim 40 env RIG_HIP_LIBRARY="$SHIM" "$B/tests/drivers/test_driver_suite_hip"
step mapped-shim 25 env RIG_HIP_LIBRARY="$SHIM" TMPDIR=/var/tmp "$B/tests/hip/test_hip_mapped"
# The loader's reuse pool through the shim's hipMemPoolCreate... (cuMemPoolCreate... on the GPU): a later
# load's tensors in the released ones' memory, every byte the file's; a pooled tensor has no IPC handle and
# says the reuse pool is why (plain memory has one through the shim: the sign the pool was used); another
# GPU's kernel through a borrow where there are two. The fake-only cases (memory limits, counts) say SKIP.
[ -x "$B/tests/load/test_load_hip" ] && step load-shim 30 env RIG_HIP_LIBRARY="$SHIM" "$B/tests/load/test_load_hip"
for kinds in hip memory+hip; do
  for t in seed rules; do
    [ -x "$B/tests/core/test_$t" ] && \
      step "ordering-$t-$kinds" 10 env RIG_HIP_LIBRARY="$SHIM" RIG_TEST_KINDS="$kinds" "$B/tests/core/test_$t"
  done
done
# 3. The event timeline, and the driver suite under compute-sanitizer (small sizes: RIG_HIP_TEST_QUICK).
step driver-shim-events 25 env RIG_HIP_LIBRARY="$SHIM" RIG_HIP_TIMELINE=events RIG_TEST_QUICK=1 \
  "$B/tests/drivers/test_driver_suite_hip"
if command -v compute-sanitizer >/dev/null; then
  # The suite provokes driver errors on purpose (unknown kernels, bad code objects): not memcheck's finds.
  quiet_api=()
  compute-sanitizer --help 2>&1 | grep -q -- --report-api-errors && quiet_api=(--report-api-errors no)
  step driver-shim-memcheck 30 compute-sanitizer --tool memcheck "${quiet_api[@]}" --error-exitcode 9 \
    env RIG_HIP_LIBRARY="$SHIM" RIG_TEST_QUICK=1 "$B/tests/drivers/test_driver_suite_hip"
  # The loss case's kernel (rig_fault) writes to address 0x10 on purpose, which memcheck reports (rc 9).
  # Every other report is a finding: the step passes only if each invalid access is rig_fault's.
  reports=$(grep -c '^========= Invalid' "$L/driver-shim-memcheck.log")
  deliberate=$(grep -A1 '^========= Invalid' "$L/driver-shim-memcheck.log" | grep -c 'at rig_fault')
  verdict="memcheck: $reports invalid accesses reported, $deliberate of them rig_fault's deliberate one(s)"
  [ "$reports" = "$deliberate" ] && verdict="$verdict: clean otherwise" || verdict="$verdict: FINDINGS"
  echo "$verdict" | tee -a "$L/all.log"
  summary+=("$verdict")
fi
unset RIG_REQUIRE

# 4. The same binaries on the fake libamdhip64 (no GPU involved): the seed's false successes.
step driver-fake 10 env RIG_HIP_LIBRARY="$FAKE" "$B/tests/drivers/test_driver_suite_hip"
step mapped-fake 10 env RIG_HIP_LIBRARY="$FAKE" TMPDIR=/var/tmp "$B/tests/hip/test_hip_mapped"
[ -x "$B/tests/load/test_load_hip" ] && step load-fake 10 env RIG_HIP_LIBRARY="$FAKE" "$B/tests/load/test_load_hip"

{ echo; echo "== summary (rc 0 passed, 124/137 timed out)"; printf '%s\n' "${summary[@]}"; } | tee -a "$L/all.log" \
  >"$L/summary.log"
cat "$L/summary.log"
