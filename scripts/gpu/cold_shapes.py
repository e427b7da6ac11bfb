#!/usr/bin/env python3
"""How rig's cold reads should be shaped on this machine's disk: `rig load` of an evicted file with its
reader threads and chunk varied, beside dd O_DIRECT (16 MiB, one stream) and dd O_DIRECT with 64 MiB
blocks, interleaved ROUNDS times (the disk's rate drifts). Every row evicts the file first (cold_layouts.py's
evict, which checks with mincore).
Usage (GPU machine): python3 cold_shapes.py RIG_BIN FILE..."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "load"))
from cold_layouts import evict, rig_gbps  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "2"))
SHAPES = [("default (12 readers, 4M)", []), ("--threads 4", ["--threads", "4"]), ("--threads 2", ["--threads", "2"]),
          ("--threads 4 --chunk 16M", ["--threads", "4", "--chunk", "16M", "--staging", "128M"]),
          ("--chunk 16M", ["--chunk", "16M", "--staging", "256M"]), ("--io buffered", ["--io", "buffered"])]


def dd(path, bs):
    t0 = time.perf_counter()
    subprocess.run(["dd", f"if={path}", "of=/dev/null", f"bs={bs}", "iflag=direct"], check=True, capture_output=True)
    return os.path.getsize(path) / (time.perf_counter() - t0) / 1e9


def main():
    rig, files = sys.argv[1], sys.argv[2:]
    for r in range(1, ROUNDS + 1):
        for f in files:
            name = os.path.basename(f)
            note = evict([f])
            print(f"r{r} {name:22s} dd O_DIRECT 16M   {dd(f, '16M'):.2f}{note}", flush=True)
            for label, extra in SHAPES:
                note = evict([f])
                got, why = rig_gbps(rig, f) if not extra else rig_extra(rig, f, extra)
                print(f"r{r} {name:22s} rig {label:26s} {got if got is None else round(got, 2)}{note}", flush=True)
            note = evict([f])
            print(f"r{r} {name:22s} dd O_DIRECT 64M   {dd(f, '64M'):.2f}{note}", flush=True)


def rig_extra(rig, path, extra):
    import json
    out = subprocess.run([rig, "load", path, "--device", "cuda:0", "--json"] + extra, capture_output=True,
                         text=True, timeout=600)
    if out.returncode:
        return None, out.stderr.strip()[-200:]
    first = json.loads(out.stdout)["loads"][0]
    return first["gb_per_s"], first.get("why", "")


if __name__ == "__main__":
    main()
