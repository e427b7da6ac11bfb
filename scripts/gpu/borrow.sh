#!/usr/bin/env bash
# Issue 13's host-borrow and overlap checks on the H200. Usage: scripts/gpu/borrow.sh BUILD_DIR (from the
# repository root; builds nothing). Runs tests/core/test_one_program (the README's program, malloc'd and
# stack memory of any alignment borrowed, numpy's through scripts/gpu/borrow_numpy.py, wraps sharing a page,
# a wrap reaching past a registered page,
# overlapping copies refused) over CUDA kinds with RIG_REQUIRE=cuda on both timelines, then over HIP kinds
# through the shim over the CUDA driver with RIG_REQUIRE=hip, and the CUDA driver suite. Logs: $OUT/borrow/.
set -u
build=${1:?usage: scripts/gpu/borrow.sh BUILD_DIR}
build=$(cd "$build" && pwd)
logs=${OUT:-/tmp/out}/borrow
mkdir -p "$logs"
summary=$logs/summary.txt
: > "$summary"
export LD_LIBRARY_PATH="$build:$build/tests/cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset RIG_CUDA_LIBRARY RIG_HIP_LIBRARY
failures=0

# step NAME COMMAND...: runs it (at most 120 s), logs to $logs/NAME.log, records PASS or FAIL.
step() {
  local name=$1
  shift
  timeout --kill-after=10 120 "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  local verdict=PASS
  [ $rc -eq 0 ] || { verdict="FAIL(rc=$rc)"; failures=$((failures + 1)); }
  printf '%-44s %s\n' "$name" "$verdict" | tee -a "$summary"
}

prog=$build/tests/core/test_one_program
for timeline in events memops; do
  for kinds in cuda memory+cuda; do
    step "one_program-$kinds-$timeline" env RIG_REQUIRE=cuda RIG_CUDA_TIMELINE=$timeline RIG_TEST_KINDS=$kinds "$prog"
  done
done
step cuda-driver env RIG_REQUIRE=cuda "$build/tests/drivers/test_driver_suite_cuda"
# numpy memory of any alignment borrowed onto cuda:0 (ctypes on librig.so.0: the machine's Python is not the
# SWIG module's), two wraps on one page, the overlap rule.
step numpy-borrow env RIG_REQUIRE=cuda python3 scripts/gpu/borrow_numpy.py "$build"
shim=$build/tests/hip/libhipshim.so
if [ -f "$shim" ]; then
  for kinds in hip memory+hip; do
    step "one_program-$kinds-shim" env RIG_REQUIRE=hip RIG_HIP_LIBRARY="$shim" RIG_TEST_KINDS=$kinds "$prog"
  done
  step numpy-borrow-hip-shim env RIG_REQUIRE=hip RIG_HIP_LIBRARY="$shim" python3 scripts/gpu/borrow_numpy.py "$build" hip:0
else
  echo "hip shim not built: $shim" | tee -a "$summary"
  failures=$((failures + 1))
fi
echo "failures: $failures" | tee -a "$summary"
[ $failures -eq 0 ]
