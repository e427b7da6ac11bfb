#!/usr/bin/env python3
"""Whether a copy's alignment moves the link (issue 32: safetensors.torch.save_file starts the data 8-byte
aligned, bench_load's own files 4 KiB aligned, and a kept registration copies from the file's own bytes).

Part 1: torch's pinned host memory to cuda:0, 64 pieces of 64 MiB (4 GiB) a pass, the source offset by
0, 8, 256, 4088 bytes from a 4 KiB boundary (the destination aligned), best of 3 passes each.
Part 2 (FILE...): writes FILE.aligned beside each safetensors FILE, the same tensors with the header padded
with spaces so the data start on a 4 KiB boundary, and prints both files' data offset mod 4096.
Usage: python3 scripts/gpu/align.py [FILE...]
"""
import json
import struct
import sys
import time

import torch


def copies(offset, piece=64 << 20, n=64):
    src = torch.empty(piece * 4 + 8192, dtype=torch.uint8).pin_memory()
    dst = torch.empty(piece, dtype=torch.uint8, device="cuda:0")
    base = (-src.data_ptr()) % 4096 + offset
    s = src[base:base + piece]
    dst.copy_(s, non_blocking=True)
    torch.cuda.synchronize()
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            dst.copy_(s, non_blocking=True)
        torch.cuda.synchronize()
        best = max(best, piece * n / (time.perf_counter() - t0) / 1e9)
    return best


def aligned_copy(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = f.read(n)
        json.loads(header)
        pad = (-(8 + n)) % 4096
        with open(path + ".aligned", "wb") as g:
            g.write(struct.pack("<Q", n + pad))
            g.write(header + b" " * pad)
            while True:
                b = f.read(64 << 20)
                if not b:
                    break
                g.write(b)
    print(f"{path}: data at {8 + n} ({(8 + n) % 4096} mod 4096); {path}.aligned: data at {8 + n + pad}", flush=True)


if __name__ == "__main__":
    for off in (0, 8, 256, 4088, 0, 8):
        print(f"pinned -> cuda:0, 64 MiB copies, source {off:4d} bytes past 4 KiB: {copies(off):.2f} GB/s", flush=True)
    for p in sys.argv[1:]:
        aligned_copy(p)
