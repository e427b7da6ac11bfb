#!/usr/bin/env bash
# The Vulkan part of the H200 run, from the repository root.
#
#   scripts/gpu/vulkan.sh --fetch BUILD_DIR   here, before BUILD_DIR is carried: downloads the Vulkan loader
#                                             (libvulkan1), the validation layer (vulkan-validationlayers) and
#                                             libglvnd with its X libraries (NVIDIA's ICD, libGLX_nvidia.so.0,
#                                             needs libGLdispatch.so.0; without it the loader answers
#                                             VK_ERROR_INCOMPATIBLE_DRIVER) as .debs into BUILD_DIR/vulkan-debs
#   scripts/gpu/vulkan.sh BUILD_DIR           on the GPU machine: unpacks them (no apt there), finds NVIDIA's
#                                             Vulkan driver, runs the Vulkan tests and the ordering suite
#                                             over Vulkan kinds with RIG_REQUIRE=vulkan (a test that would
#                                             skip fails), under the validation layer where it loads, then
#                                             the chain benchmark. Logs go to $OUT/vulkan/; summary.txt
#                                             lists each step.
#
# VULKAN_AB="DIR..." runs only the chain benchmark through each DIR's librig.so.0 in turn, VULKAN_AB_ROUNDS
# (3) times over, after the same setup (an A/B of libraries in one call); an entry DIR:VAR=VALUE runs DIR's
# library with that variable set.
# VULKAN_SH_USE_CARRIED=1 uses the carried loader even where the machine has one (to rehearse the script
# on a machine with lavapipe). The NVIDIA driver's Vulkan ICD lives in libGLX_nvidia.so.0; where the
# machine has no ICD manifest for it (a container given only compute capabilities), one is written here.
set -u

if [ "${1:-}" = --fetch ]; then
  build=${2:?usage: scripts/gpu/vulkan.sh --fetch BUILD_DIR}
  mkdir -p "$build/vulkan-debs" && cd "$build/vulkan-debs" || exit 1
  apt-get download libvulkan1 vulkan-validationlayers libglvnd0 libglx0 libegl1 libx11-6 libxext6 libxcb1 \
    libxau6 libxdmcp6 libbsd0 libmd0 || exit 1
  ls -la
  exit 0
fi

build=${1:?usage: scripts/gpu/vulkan.sh BUILD_DIR}
build=$(cd "$build" && pwd)
logs=${OUT:-/tmp/out}/vulkan
mkdir -p "$logs"
summary=$logs/summary.txt
: > "$summary"
failures=0
note() { echo "$*" | tee -a "$summary"; }

# step NAME TIMEOUT_S COMMAND...: runs it, logs to $logs/NAME.log, records PASS/FAIL/TIMEOUT with seconds.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  local verdict=PASS
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict=TIMEOUT; elif [ $rc -eq 77 ]; then
    # A program whose cases ran, some skipped with their reason (Vulkan borrows no host memory by default,
    # and never read-only host memory): reported as what it is, neither a pass nor a failure.
    verdict="SKIP($(grep '^\[  SKIPPED \] ' "$logs/$name.log" | grep -v 'test(s)' | sort -u | wc -l) cases)"
  elif [ $rc -ne 0 ]; then verdict="FAIL(rc=$rc)"; fi
  case $verdict in PASS|SKIP*) ;; *) failures=$((failures + 1)) ;; esac
  printf '%-48s %-12s %4ds\n' "$name" "$verdict" $((SECONDS - t0)) | tee -a "$summary"
}

# --- the loader, the layer and NVIDIA's ICD (vulkan-env.sh) ---------------------------------------------
source "$(dirname "${BASH_SOURCE[0]}")/vulkan-env.sh"
vulkan_env "$build"
ls -la /usr/share/vulkan/icd.d /etc/vulkan/icd.d > "$logs/icd-dirs.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv > "$logs/nvidia-smi.txt" 2>&1

# --- VULKAN_AB="DIR..." (with VULKAN_AB_ROUNDS, 3): only the chain benchmark, through each directory's
# librig.so.0 in turn, round after round (an A/B of libraries in one call); then stop.
if [ -n "${VULKAN_AB:-}" ]; then
  for ((r = 1; r <= ${VULKAN_AB_ROUNDS:-3}; r++)); do
    for entry in $VULKAN_AB; do
      lib=${entry%%:*}
      extra=()  # DIR:VAR=VALUE runs that library with VAR=VALUE set
      [ "$entry" != "$lib" ] && extra=("${entry#*:}")
      tag=$(basename "$lib")${extra:+-${extra[0]%%=*}}-$r
      step "ab-$tag" 300 env LD_LIBRARY_PATH="$lib:$LD_LIBRARY_PATH" "${extra[@]}" "$build/bench/vulkan/bench_vulkan_chain" 512 101
      grep -E "ratio wall  a/b" "$logs/ab-$tag.log" | sed "s|^|$tag |" | tee -a "$summary"
    done
  done
  exit $((failures > 0))
fi

# --- the validation layer, where the carried one loads ---------------------------------------------------
validation=
if [ -f "$root/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json" ]; then
  export VK_ADD_LAYER_PATH=$root/usr/share/vulkan/explicit_layer.d VK_LAYER_PATH=$root/usr/share/vulkan/explicit_layer.d
  if ldd "$libdir/libVkLayer_khronos_validation.so" 2>&1 | grep -q 'not found'; then
    note "validation layer: carried, but its libraries do not resolve here (no validation pass):"
    ldd "$libdir/libVkLayer_khronos_validation.so" 2>&1 | grep 'not found' | tee -a "$summary"
  else
    validation=1
    note "validation layer: carried ($VK_ADD_LAYER_PATH)"
  fi
else
  note "validation layer: not carried (no validation pass)"
fi

# --- tests: first plain, then the Vulkan tests again under the validation layer ----------------------------
# (two passes, so that a message of a layer older than the driver cannot hide the plain results; a
# validation message fails its test binary with exit status 3 and is printed in its log)
export RIG_REQUIRE=vulkan
unset RIG_VULKAN_VALIDATION
t=$build/tests/vulkan
if [ -x "$t/test_vulkan_device" ]; then
  step vulkan-device 180 "$t/test_vulkan_device"
  grep -m1 "vulkan:0 is" "$logs/vulkan-device.log" | tee -a "$summary"
  for n in commit rules compute recorded; do step "vulkan-$n" 300 "$t/test_vulkan_$n"; done
  step vulkan-compute-descriptor-pools 300 env RIG_VULKAN_NO_PUSH_DESCRIPTORS=1 "$t/test_vulkan_compute"
  step vulkan-import 180 env RIG_VULKAN_HOST_IMPORT=1 "$t/test_vulkan_import"
  # Buffers as memory descriptors (VK_KHR_external_memory_fd): within a process, across a fork with
  # SCM_RIGHTS, the driver's refusal of a file that is no memory; then the two-process example on vulkan:0.
  step vulkan-memory-fd 180 "$t/test_vulkan_memory_fd"
  step vulkan-memory-fd-refusal 120 "$t/test_vulkan_memory_fd" refusal
  step vulkan-ipc-pair 120 "$build/tests/interop/ipc_pair" vulkan:0
  # Points as semaphore descriptors and sync files (VK_KHR_external_semaphore_fd): an import on a second
  # vulkan:0 and across a fork orders a copy, a value not yet reached times out, bad descriptors; the
  # driver's refusal of a file that is no semaphore. Required here (opted in): a capability query that says
  # no fails. Sync files are not required: the H200's driver offers none for binary semaphores (2026-12-01).
  step vulkan-semaphore-fd 180 env RIG_VULKAN_SEMAPHORE_FD=1 RIG_REQUIRE=vulkan,semaphore_fd "$t/test_vulkan_semaphore_fd"
  step vulkan-semaphore-fd-refusal 120 env RIG_VULKAN_SEMAPHORE_FD=1 RIG_REQUIRE=vulkan,semaphore_fd \
    "$t/test_vulkan_semaphore_fd" refusal
  [ -f "$t/libvklose.so" ] && step vulkan-loss 180 env RIG_VULKAN_LIBRARY="$t/libvklose.so" \
    RIG_VKSHIM_REAL="${RIG_VULKAN_LIBRARY:-libvulkan.so.1}" "$t/test_vulkan_loss"
  # The calls a submit makes (semaphore reads; command buffers begun: none for a recorded run).
  [ -f "$t/libvklose.so" ] && step vulkan-calls 180 env RIG_VULKAN_LIBRARY="$t/libvklose.so" \
    RIG_VKSHIM_REAL="${RIG_VULKAN_LIBRARY:-libvulkan.so.1}" "$t/test_vulkan_calls"
  if [ -n "$validation" ]; then
    for n in validation device commit rules compute recorded; do
      step "validated-vulkan-$n" 300 env RIG_VULKAN_VALIDATION=1 "$t/test_vulkan_$n"
    done
    step validated-vulkan-import 180 env RIG_VULKAN_VALIDATION=1 RIG_VULKAN_HOST_IMPORT=1 "$t/test_vulkan_import"
    step validated-vulkan-memory-fd 180 env RIG_VULKAN_VALIDATION=1 "$t/test_vulkan_memory_fd"
    step validated-vulkan-semaphore-fd 180 env RIG_VULKAN_VALIDATION=1 RIG_VULKAN_SEMAPHORE_FD=1 \
      RIG_REQUIRE=vulkan,semaphore_fd "$t/test_vulkan_semaphore_fd"
    grep -h "Vulkan validation\|validation not checked" "$logs"/validated-*.log | sort | uniq -c | tee -a "$summary"
  fi
else
  note "tests/vulkan not built in $build"
  failures=$((failures + 1))
fi
for exe in "$build"/tests/core/test_*; do
  [ -x "$exe" ] && [ -f "$exe" ] || continue
  for kinds in memory+vulkan vulkan; do
    step "ordering-$(basename "$exe")-$kinds" 300 env RIG_TEST_KINDS=$kinds "$exe"
  done
done

# --- the chain benchmark (no validation: it would be timing the layer) ------------------------------------
bench=$build/bench/vulkan/bench_vulkan_chain
if [ -x "$bench" ]; then
  # 512 ops a pass, 101 rounds (bench/README.md, "bench/vulkan: how it measures"): the chains, their ratio
  # lines and the goal's verdict go to the summary
  step bench-vulkan-chain 300 "$bench" 512 101
  grep -E "benchmark|copies|dispatches|ratio|issue 14" "$logs/bench-vulkan-chain.log" >> "$summary"
  # the same with exportable timelines (RIG_VULKAN_SEMAPHORE_FD=1): what the opt-in costs
  step bench-vulkan-chain-exportable 300 env RIG_VULKAN_SEMAPHORE_FD=1 "$bench" 512 101
  grep -E "copies|dispatches|ratio|issue 14" "$logs/bench-vulkan-chain-exportable.log" |
    sed 's/^/exportable timelines: /' >> "$summary"
else
  note "bench/vulkan not built (bench_vulkan_chain missing)"
fi

rm -rf "$root"
note "failures: $failures"
[ $failures -eq 0 ]
