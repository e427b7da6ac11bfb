#!/usr/bin/env python3
"""What a loader's many small copies cost through rig, one submit a copy against rig_submit_many batches
(issue 32's mixture-of-experts file: 1341 tensors of about 3 MiB, whose kept reload ran 0.93 of the link
where 64 MiB tensors ran 0.98).

From one device's pinned host memory to its device memory (both made once, the device memory written once
before any timing: fresh memory runs slower, bench/README.md), COUNT copies of SIZE bytes a pass, the copies
submitted (a) one run a copy, as the loader's copier does, and (b) BATCH runs a rig_submit_many; best of
ROUNDS passes each, interleaved; and the same bytes in 64 MiB copies as the bound.

Usage (rig's Python package importable): python3 bench/load/copy_batches.py [DEVICE, cuda:0]
  COUNT (1341), SIZE (3145728), BATCH (16), ROUNDS (5).
"""
import os
import sys
import time

import rig

COUNT = int(os.environ.get("COUNT", "1341"))
SIZE = int(os.environ.get("SIZE", str(3 << 20)))
BATCH = int(os.environ.get("BATCH", "16"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))


def runs_for(dev, src, dst, size, count):
    sub = rig.Submission(dev, [rig.copy(0, 1)], [rig.Access.READ, rig.Access.WRITE])
    runs, views = [], []
    for i in range(count):
        r = sub.take()
        s, d = src.view(i * size, size), dst.view(i * size, size)
        r.set_buffer(0, s)
        r.set_buffer(1, d)
        runs.append(r)
        views += [s, d]
    return sub, runs, views


def one_pass(runs, batch):
    t0 = time.perf_counter()
    last = None
    if batch == 1:
        for r in runs:
            last = r.submit()
    else:
        for i in range(0, len(runs), batch):
            last = rig.submit_many(runs[i:i + batch])[-1]
    rig.wait_point(last)
    return time.perf_counter() - t0


def main():
    dev = rig.open_device(sys.argv[1] if len(sys.argv) > 1 else "cuda:0")
    total = COUNT * SIZE
    src = rig.Buffer.create(dev, total, rig.Memory.PINNED)
    dst = rig.Buffer.create(dev, total)
    rows = {"(a) one submit a copy": (runs_for(dev, src, dst, SIZE, COUNT), 1),
            f"(b) {BATCH} copies a rig_submit_many": (runs_for(dev, src, dst, SIZE, COUNT), BATCH)}
    big = 64 << 20
    rows["(c) the same bytes in 64 MiB copies"] = (runs_for(dev, src, dst, big, max(1, total // big)), 1)
    for (_, runs, _), batch in rows.values():
        one_pass(runs, batch)  # the device memory written once, the submissions warm
    best = {k: 0.0 for k in rows}
    for _ in range(ROUNDS):
        for k, ((_, runs, _), batch) in rows.items():
            nbytes = len(runs) * (big if k.startswith("(c)") else SIZE)
            best[k] = max(best[k], nbytes / one_pass(runs, batch) / 1e9)
    print(f"{COUNT} copies of {SIZE} bytes, {dev!r}, best of {ROUNDS} passes each, interleaved:")
    for k, v in best.items():
        print(f"  {k:42s} {v:6.2f} GB/s  ({v / best['(c) the same bytes in 64 MiB copies']:.3f} of (c))")


if __name__ == "__main__":
    main()
