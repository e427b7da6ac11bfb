#!/usr/bin/env bash
# The third H200 call of 2026-12-04's second session (issue 32), after the caller's pool grows behind and a
# file kept registered loads into the reuse pool: every layout (layouts.py, two rounds), 16 GiB in 4 shards,
# Python's rig.load_file against `rig load`, and where a first load's fresh device memory costs (copies into
# memory fresh from the driver, into the same memory again, and into fresh memory a memset touched first).
# Usage (repository root, GPU machine): scripts/gpu/session8.sh BUILD. Writes $OUT/session8.txt.
. scripts/gpu/session-env.sh "${1:-}"
{
  date -u
  echo "=== fresh device memory: 4 GiB from pinned memory in 64 MiB copies"
  timeout 90 python3 - <<'PY'
import ctypes, time, torch
cuda = ctypes.CDLL("libcuda.so.1")
torch.empty(1, device="cuda:0"); torch.cuda.synchronize()
piece, n = 64 << 20, 64
src = torch.empty(piece, dtype=torch.uint8).pin_memory()
def fresh():
    p = ctypes.c_uint64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(piece * n)) == 0
    return p.value
def run(dst, memset=False):
    s = torch.cuda.current_stream().cuda_stream
    torch.cuda.synchronize(); t0 = time.perf_counter()
    if memset:
        assert cuda.cuMemsetD8Async(ctypes.c_uint64(dst), 0, ctypes.c_size_t(piece * n), ctypes.c_void_p(s)) == 0
    for i in range(n):
        assert cuda.cuMemcpyHtoDAsync_v2(ctypes.c_uint64(dst + i * piece), ctypes.c_void_p(src.data_ptr()),
                                         ctypes.c_size_t(piece), ctypes.c_void_p(s)) == 0
    torch.cuda.synchronize()
    return piece * n / (time.perf_counter() - t0) / 1e9
for r in range(3):
    d = fresh(); a = run(d); b = run(d); cuda.cuMemFree_v2(ctypes.c_uint64(d))
    e = fresh(); c = run(e, memset=True); cuda.cuMemFree_v2(ctypes.c_uint64(e))
    print(f"  round {r}: fresh {a:.2f} GB/s, the same memory again {b:.2f}, fresh with a memset first (counted) {c:.2f}")
PY
  echo "=== every layout, 4 GiB (layouts.py, two rounds)"
  ROUNDS=2 timeout 240 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | grep -v "^ *$"
  echo "=== 16 GiB in 4 shards (one round)"
  LAYOUT_GIB=16 LAYOUTS=sharded ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$RIG" /tmp/layouts16 "$B" 2>&1 | tail -4
  rm -rf /tmp/layouts16
  echo "=== rig.load_file against rig load (python_rows.py, one round)"
  . scripts/gpu/pyrig.sh
  ROUNDS=1 timeout 100 python3 bench/load/python_rows.py "$RIG" /tmp/layouts/uniform.safetensors \
    /tmp/layouts/moe.safetensors 2>&1 | tail -10
  date -u
} 2>&1 | tee "$O/session8.txt"
