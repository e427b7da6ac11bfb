#!/usr/bin/env python3
"""What a mark after each staged copy costs the link (issue 32's later loads): N pinned-to-device copies of
PIECE bytes on one stream, into device memory written once before, best of 4 passes, with after each copy
nothing, a cuEventRecord, a cuEventRecord after every second copy, a fenced cuStreamWriteValue64 (rig's
memory-operation timeline) or one without the memory barrier (CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER).
Each row's GB/s and its fraction of the plain row. Usage (GPU machine): python3 mark_cost.py [PIECE_MIB N]"""
import ctypes
import sys
import time

import torch

cuda = ctypes.CDLL("libcuda.so.1")
torch.empty(1, device="cuda:0")
torch.cuda.synchronize()
stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
piece = int(sys.argv[1]) << 20 if len(sys.argv) > 1 else 4 << 20
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
src = torch.empty(piece * n, dtype=torch.uint8).pin_memory()
dst = torch.empty(piece * n, dtype=torch.uint8, device="cuda:0")
dst.copy_(src, non_blocking=True)  # the destination written once: not fresh memory (bench/README.md)
torch.cuda.synchronize()
events = []
for _ in range(64):
    e = ctypes.c_void_p()
    assert cuda.cuEventCreate(ctypes.byref(e), 2) == 0  # CU_EVENT_DISABLE_TIMING
    events.append(e)
word = torch.zeros(8, dtype=torch.int64).pin_memory()
word_dev = ctypes.c_uint64()
assert cuda.cuMemHostGetDevicePointer_v2(ctypes.byref(word_dev), ctypes.c_void_p(word.data_ptr()), 0) == 0


def after(kind, i):
    if kind == "event":
        assert cuda.cuEventRecord(events[i % 64], stream) == 0
    elif kind == "event/2" and i % 2:
        assert cuda.cuEventRecord(events[i % 64], stream) == 0
    elif kind in ("write", "write-nobarrier"):
        flags = 1 if kind == "write-nobarrier" else 0
        r = cuda.cuStreamWriteValue64_v2(stream, word_dev, ctypes.c_uint64(i + 1), ctypes.c_uint(flags))
        if r:
            raise RuntimeError(f"cuStreamWriteValue64_v2 answered {r}")


def rate(kind):
    best = 0.0
    for _ in range(4):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(n):
            assert cuda.cuMemcpyHtoDAsync_v2(ctypes.c_uint64(dst.data_ptr() + i * piece),
                                             ctypes.c_void_p(src.data_ptr() + i * piece), ctypes.c_size_t(piece),
                                             stream) == 0
            after(kind, i)
        torch.cuda.synchronize()
        best = max(best, piece * n / (time.perf_counter() - t0) / 1e9)
    return best


kinds = ["plain", "event", "event/2", "write", "write-nobarrier"]
for r in range(2):
    got = {}
    for k in kinds:
        try:
            got[k] = rate(k)
        except RuntimeError as e:  # a row the driver refuses: said, and the others still measured
            print(f"  {k}: {e}", flush=True)
            got[k] = float("nan")
    print(f"round {r + 1}: {n} copies of {piece >> 20} MiB: " +
          ", ".join(f"{k} {got[k]:.2f} GB/s ({got[k] / got['plain']:.3f})" for k in kinds), flush=True)
