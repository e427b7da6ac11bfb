#!/usr/bin/env bash
# The last H200 call of 2026-12-04's second session. The loader's CUDA test (a kept pool now grows behind)
# and the keeper's, with RIG_REQUIRE=cuda; Vulkan's tests on NVIDIA's driver (libglvnd carried) with
# RIG_REQUIRE=vulkan; and whether the loader's small copies lose the link to the event each copy records
# (1341 copies of 3 MiB and 64 of 64 MiB, pinned to cuda:0, with and without a cuEventRecord after each).
# Usage (repository root, GPU machine): scripts/gpu/session9.sh BUILD. Writes $OUT/session9.txt.
. scripts/gpu/session-env.sh "${1:-}"
run() {  # TIMEOUT COMMAND...: its last lines and its status
  local t=$1; shift
  timeout "$t" "$@" > /tmp/step.log 2>&1; local rc=$?
  echo "--- $(basename "$1") rc=$rc"; grep -E "PASSED|FAILED|SKIPPED|\[  (FAILED|SKIPPED) |skip" /tmp/step.log | head -8
}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "=== CUDA (RIG_REQUIRE=cuda)"
  RIG_REQUIRE=cuda run 90 "$B/tests/load/test_load_cuda"
  RIG_REQUIRE=cuda run 120 "$B/tests/keep/test_keep_gpu"
  echo "=== event per copy"
  timeout 90 python3 - <<'PY'
import ctypes, time, torch
cuda = ctypes.CDLL("libcuda.so.1")
torch.empty(1, device="cuda:0"); torch.cuda.synchronize()
s = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
def rate(piece, n, events):
    src = torch.empty(piece * n, dtype=torch.uint8).pin_memory()
    dst = torch.empty(piece * n, dtype=torch.uint8, device="cuda:0")
    evs = []
    for _ in range(64):
        e = ctypes.c_void_p(); assert cuda.cuEventCreate(ctypes.byref(e), 2) == 0; evs.append(e)  # DISABLE_TIMING
    best = 0
    for _ in range(4):
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for i in range(n):
            assert cuda.cuMemcpyHtoDAsync_v2(ctypes.c_uint64(dst.data_ptr() + i * piece),
                                             ctypes.c_void_p(src.data_ptr() + i * piece), ctypes.c_size_t(piece), s) == 0
            if events: assert cuda.cuEventRecord(evs[i % 64], s) == 0
        torch.cuda.synchronize()
        best = max(best, piece * n / (time.perf_counter() - t0) / 1e9)
    return best
for piece, n in ((3 << 20, 1341), (64 << 20, 64), (4 << 20, 1024), (3 << 20, 1341)):
    print(f"  {n} copies of {piece >> 20} MiB: {rate(piece, n, False):.2f} GB/s plain, {rate(piece, n, True):.2f} with an event after each")
PY
  echo "=== Vulkan on NVIDIA's driver (RIG_REQUIRE=vulkan)"
  . scripts/gpu/vulkan-env.sh
  vulkan_env "$B"
  export RIG_REQUIRE=vulkan
  for n in device commit rules recorded memory_fd; do run 120 "$B/tests/vulkan/test_vulkan_$n"; done
  RIG_VULKAN_SEMAPHORE_FD=1 RIG_REQUIRE=vulkan,semaphore_fd run 120 "$B/tests/vulkan/test_vulkan_semaphore_fd"
  run 120 "$B/tests/load/test_load_vulkan"
  RIG_KEEP_DEVICE=vulkan:0 run 60 "$B/tests/keep/test_keep_gpu"
  date -u
} 2>&1 | tee "$O/session9.txt"
