#!/usr/bin/env bash
# The CUDA part of the H200 run. Usage: scripts/gpu/cuda.sh BUILD_DIR   (run from the repository root)
# Runs the CUDA tests and the ordering suite over CUDA kinds with RIG_REQUIRE=cuda (a test that would skip
# fails), both timelines (events, the default; stream memory operations), a short case under compute-sanitizer's
# memcheck and racecheck, then the chain benchmark. Logs go to $OUT/cuda/; summary.txt lists each step.
set -u
build=${1:?usage: scripts/gpu/cuda.sh BUILD_DIR}
build=$(cd "$build" && pwd)
logs=${OUT:-/tmp/out}/cuda
mkdir -p "$logs"
summary=$logs/summary.txt
: > "$summary"
export LD_LIBRARY_PATH="$build:$build/tests/cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # libcmocka.so.0 lives in the build dir
export RIG_REQUIRE=cuda
# CUDA_SH_FAKE=path/to/libfakecuda.so rehearses the script without a GPU (no compute-sanitizer then).
if [ -n "${CUDA_SH_FAKE:-}" ]; then export RIG_CUDA_LIBRARY=$CUDA_SH_FAKE; else unset RIG_CUDA_LIBRARY; fi
failures=0
# The whole script stays inside one device command (10 min): steps that would start after the budget are
# recorded as skipped instead. CUDA_SH_BUDGET_S overrides.
budget=${CUDA_SH_BUDGET_S:-480}

# step NAME TIMEOUT_S COMMAND...: runs it, logs to $logs/NAME.log, records PASS/FAIL/TIMEOUT with seconds.
step() {
  local name=$1 limit=$2
  shift 2
  if [ $SECONDS -ge $budget ]; then
    printf '%-48s %-12s\n' "$name" "SKIPPED(budget)" | tee -a "$summary"
    failures=$((failures + 1))
    return
  fi
  [ $((SECONDS + limit)) -le $((budget + 60)) ] || limit=$((budget + 60 - SECONDS))
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  local verdict=PASS
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict=TIMEOUT; elif [ $rc -ne 0 ]; then verdict="FAIL(rc=$rc)"; fi
  [ "$verdict" = PASS ] || failures=$((failures + 1))
  printf '%-48s %-12s %4ds\n' "$name" "$verdict" $((SECONDS - t0)) | tee -a "$summary"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$logs/nvidia-smi.txt" 2>&1
[ -x "$build/tools/rig" ] && step rig-devices 60 "$build/tools/rig" devices

bench=$build/bench/cuda/bench_cuda_chain

# tests TIMELINE: the CUDA tests and the ordering suite over CUDA kinds, with that timeline.
tests() {
  local timeline=$1
  if [ $timeline = memops ]; then export RIG_CUDA_TIMELINE=memops; else unset RIG_CUDA_TIMELINE; fi
  for t in driver registration loss programs; do
    case $t in  # the shared driver suite, loss and random programs are tests/drivers', built per backend
      driver) exe="$build/tests/drivers/test_driver_suite_cuda" ;;
      loss | programs) exe="$build/tests/drivers/test_driver_${t}_cuda" ;;
      *) exe="$build/tests/cuda/test_cuda_$t" ;;
    esac
    step "cuda-$t-$timeline" 120 "$exe"
  done
  # The loader through the CUDA driver (tests/load/test_stream.c): the staged path and the reuse pool a kept
  # staging pool's tensors come from; the cases that need the fake's switches say SKIP.
  [ -x "$build/tests/load/test_load_cuda" ] && step "load-cuda-$timeline" 120 "$build/tests/load/test_load_cuda"
  for exe in "$build"/tests/core/test_*; do
    [ -x "$exe" ] && [ -f "$exe" ] || continue
    for kinds in memory+cuda cuda; do
      step "ordering-$(basename "$exe")-$kinds-$timeline" 120 env RIG_TEST_KINDS=$kinds "$exe"
    done
  done
  unset RIG_CUDA_TIMELINE
}

# Most valuable first, in case the budget runs out: the default timeline, the benchmark, the sanitizers,
# then the memory-operation timeline.
tests events

if [ -x "$bench" ]; then
  # The benchmark runs both timelines itself (rows a and am); the ratios are against rows of the same run.
  step bench-chain 300 "$bench" 2048 101
  grep -E "===|copies|kernels|ratio|edge|row|\((a|a1|am|b|b2|br|c|d|d1|e)\) " "$logs/bench-chain.log" >> "$summary"
else
  echo "bench/cuda not built (bench_cuda_chain missing)" | tee -a "$summary"
fi

# compute-sanitizer: a short case (RIG_CUDA_TEST_QUICK shrinks the kernel chain) and the seed programs.
# --report-api-errors no: the tests provoke driver errors on purpose (bad PTX, a second unregister); the
# memory and race reports are what count.
if [ -n "${CUDA_SH_FAKE:-}" ]; then
  echo "compute-sanitizer: not run on the fake" | tee -a "$summary"
elif command -v compute-sanitizer > /dev/null; then
  quiet_api=()
  compute-sanitizer --help 2>&1 | grep -q -- --report-api-errors && quiet_api=(--report-api-errors no)
  for tool in memcheck racecheck; do
    step "sanitizer-$tool-cuda-driver" 180 env RIG_CUDA_TEST_QUICK=1 \
      compute-sanitizer --tool $tool "${quiet_api[@]}" --error-exitcode 99 "$build/tests/drivers/test_driver_suite_cuda"
    # The ordering suite over CUDA kinds (the model with fewer programs: every kernel runs instrumented).
    for t in seed rules threads model; do
      for kinds in memory+cuda cuda; do
        [ -x "$build/tests/core/test_$t" ] && step "sanitizer-$tool-$t-$kinds" 180 env RIG_TEST_KINDS=$kinds \
          RIG_MODEL_PROGRAMS=40 compute-sanitizer --tool $tool "${quiet_api[@]}" --error-exitcode 99 \
          "$build/tests/core/test_$t"
      done
    done
  done
else
  echo "compute-sanitizer not found" | tee -a "$summary"
  failures=$((failures + 1))
fi

tests memops

echo "failures: $failures" | tee -a "$summary"
[ $failures -eq 0 ]
