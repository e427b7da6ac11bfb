#!/usr/bin/env python3
"""Issue 34: what a keeper's attach costs against the tensor count and the bytes, apart. Writes sparse
safetensors files (zeros, no disk writes) of COUNT tensors of SIZE bytes each, serves each with `rig keep`
on cuda:0 and attaches five times with rig.attach(framework="rig"), timing every tensor's a.buffer(i) call:
the slow calls are the ones that open a keeper arena's IPC handle (the first tensor of each arena), the
rest rig's own per-tensor work.

Usage (GPU machine, rig's Python package importable): python3 bench/keep/attach_sizes.py RIG_BIN DIR
"""
import json
import os
import struct
import subprocess
import sys
import time

import rig

SHAPES = [(64, 4096), (1461, 4096), (64, 256 << 20), (1461, 12 << 20)]  # (count, bytes a tensor)


def write(path, count, size):
    header = {"t.%d" % i: {"dtype": "U8", "shape": [size], "data_offsets": [i * size, (i + 1) * size]}
              for i in range(count)}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.truncate(8 + len(h) + count * size)


def attach_once(sock):
    a = rig.Attachment(sock, device="cuda:0")
    calls = []
    t0 = time.perf_counter()
    for t in a.tensors:
        c0 = time.perf_counter()
        buf, _ = a.buffer(t.index)
        calls.append(time.perf_counter() - c0)
        buf.close()
    total = time.perf_counter() - t0
    a.close()
    return total, calls


def main():
    rig_bin, d = sys.argv[1], sys.argv[2]
    os.makedirs(d, exist_ok=True)
    for count, size in SHAPES:
        path = os.path.join(d, "t%d_%d.safetensors" % (count, size))
        sock = os.path.join(d, "s%d_%d" % (count, size))
        write(path, count, size)
        keeper = subprocess.Popen([rig_bin, "keep", path, "--device", "cuda:0", "--socket", sock],
                                  stderr=subprocess.PIPE, text=True)
        for line in keeper.stderr:
            if "loaded" in line or "failed" in line:
                break
        rows = []
        for _ in range(5):
            total, calls = attach_once(sock)
            slow = sorted(calls, reverse=True)
            over = [c for c in calls if c > 1e-3]
            rows.append("%.1f ms (%d calls over 1 ms: %.1f ms; the rest %.1f us a call)" % (
                total * 1e3, len(over), sum(over) * 1e3,
                (total - sum(over)) * 1e6 / max(1, len(calls) - len(over))))
        gib = count * size / (1 << 30)
        print("%5d tensors of %9d bytes (%.2f GiB): %s" % (count, size, gib, rows[0]), flush=True)
        for r in rows[1:]:
            print("%48s %s" % ("", r), flush=True)
        keeper.terminate()
        keeper.wait(timeout=60)
        os.unlink(path)


if __name__ == "__main__":
    main()
