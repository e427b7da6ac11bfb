#!/usr/bin/env python3
"""Why a first load into the reuse pool runs slower than one into plain memory (issue 32): 4 GiB copied from
pinned memory in 64 MiB copies into four 1 GiB destinations, each row in a fresh process (CuPy), its
allocations counted in its time:
  malloc       cudaMalloc'd, fresh; then the same memory again (written once)
  pool         cudaMallocAsync from the device's default pool (release threshold at the maximum), fresh;
               then freed into the pool and allocated again (what a later load gets)
  pool-grown   the pool grown first by one 4 GiB allocation given straight back, then the four from it
  pool-memset  fresh from the pool, each destination set with cudaMemsetAsync before its copies
Usage (GPU machine): python3 pool_probe.py [ROUNDS]   (a row alone: python3 pool_probe.py ROW)"""
import subprocess
import sys
import time

GIB, PIECE = 1 << 30, 64 << 20
ROWS = ["malloc", "pool", "pool-grown", "pool-memset"]


def row(kind):
    import cupy
    rt = cupy.cuda.runtime
    cupy.cuda.Device(0).use()
    stream = cupy.cuda.Stream(non_blocking=True)
    s = stream.ptr
    src = cupy.cuda.alloc_pinned_memory(GIB)
    pool = rt.deviceGetDefaultMemPool(0)
    rt.memPoolSetAttribute(pool, rt.cudaMemPoolAttrReleaseThreshold, 2**64 - 1)
    rt.deviceSynchronize()

    def copies(dsts):
        for d in dsts:
            for k in range(GIB // PIECE):
                rt.memcpyAsync(d + k * PIECE, src.ptr + k * PIECE, PIECE, rt.memcpyHostToDevice, s)

    def timed(make):
        t0 = time.perf_counter()
        dsts = make()
        copies(dsts)
        stream.synchronize()
        return dsts, 4 * GIB / (time.perf_counter() - t0) / 1e9

    if kind == "malloc":
        dsts, first = timed(lambda: [rt.malloc(GIB) for _ in range(4)])
        _, again = timed(lambda: dsts)
        return first, again
    if kind == "pool-grown":
        def grown():
            big = rt.mallocAsync(4 * GIB, s)
            rt.freeAsync(big, s)
            return [rt.mallocAsync(GIB, s) for _ in range(4)]
        _, first = timed(grown)
        return first, None
    if kind == "pool-memset":
        def set_first():
            dsts = [rt.mallocAsync(GIB, s) for _ in range(4)]
            for d in dsts:
                rt.memsetAsync(d, 0, GIB, s)
            return dsts
        _, first = timed(set_first)
        return first, None
    dsts, first = timed(lambda: [rt.mallocAsync(GIB, s) for _ in range(4)])
    for d in dsts:
        rt.freeAsync(d, s)
    stream.synchronize()
    _, again = timed(lambda: [rt.mallocAsync(GIB, s) for _ in range(4)])
    return first, again


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ROWS:
        first, again = row(sys.argv[1])
        print(f"{first:.2f}" + (f" {again:.2f}" if again else ""))
        sys.exit(0)
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    for r in range(1, rounds + 1):
        out = []
        for kind in ROWS:
            p = subprocess.run([sys.executable, __file__, kind], capture_output=True, text=True, timeout=120)
            got = p.stdout.split() if p.returncode == 0 else ["failed: " + (p.stderr.strip().splitlines() or ["?"])[-1]]
            out.append(f"{kind} {' then '.join(got)}")
        print(f"round {r} (GB/s, fresh then again): " + "; ".join(out), flush=True)
