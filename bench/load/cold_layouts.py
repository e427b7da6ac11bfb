#!/usr/bin/env python3
"""Cold loads on the layouts users load (issue 32: "cold at least the faster of the file system's two read
modes and never behind a peer"), on files bench/load/layouts.py wrote, interleaved ROUNDS times (a disk's
rate drifts from run to run, so only rows of one round compare). Before each row every file of the layout
is evicted (posix_fadvise DONTNEED) and mincore confirms it: a row whose files kept over 10% resident says
NOT COLD. Rows, in GB/s of the layout's bytes:
  - dd O_DIRECT: `dd iflag=direct bs=16M` over each file, one after the other (the disk's direct rate);
  - buffered: `dd bs=16M` over each file (the page cache's readahead);
  - rig load: `rig load PATH --device cuda:0 --json` in a fresh process, its first load (the read mode rig
    picked is in its `why`, printed once a layout);
  - safetensors: `safetensors.torch.load_file(f, device="cuda:0")` over each file, timed inside this
    process to torch.cuda.synchronize().
Usage (GPU machine): python3 bench/load/cold_layouts.py RIG_BIN PATH...  (PATH: a .safetensors file or a
checkpoint's index.json). ROUNDS (default 2)."""
import ctypes
import json
import mmap
import os
import subprocess
import sys
import time

import torch
from safetensors.torch import load_file

ROUNDS = int(os.environ.get("ROUNDS", "2"))
libc = ctypes.CDLL(None, use_errno=True)


def files_of(path):
    if path.endswith(".json"):
        d = os.path.dirname(path)
        return sorted({os.path.join(d, f) for f in json.load(open(path))["weight_map"].values()})
    return [path]


def resident_fraction(files):
    # mincore over each file mapped read-only (libc's mmap: Python's mmap gives no address of a read-only
    # mapping): the share of its pages in the page cache.
    page = os.sysconf("SC_PAGE_SIZE")
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    resident = total = 0
    for f in files:
        size = os.path.getsize(f)
        fd = os.open(f, os.O_RDONLY)
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        os.close(fd)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap " + f)
        n = (size + page - 1) // page
        vec = (ctypes.c_ubyte * n)()
        rc = libc.mincore(addr, size, vec)
        libc.munmap(addr, size)
        if rc != 0:
            raise OSError(ctypes.get_errno(), "mincore " + f)
        resident += sum(v & 1 for v in bytes(vec))
        total += n
    return resident / max(total, 1)


def evict(files):
    subprocess.run("sync", shell=True)
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    r = resident_fraction(files)
    return "" if r <= 0.10 else f" NOT COLD ({r:.0%} resident)"


def dd_gbps(files, direct):
    t0 = time.perf_counter()
    for f in files:
        subprocess.run(["dd", f"if={f}", "of=/dev/null", "bs=16M"] + (["iflag=direct"] if direct else []),
                       check=True, capture_output=True)
    return sum(os.path.getsize(f) for f in files) / (time.perf_counter() - t0) / 1e9


def rig_gbps(rig, path):
    out = subprocess.run([rig, "load", path, "--device", "cuda:0", "--json"], capture_output=True, text=True,
                         timeout=600)
    if out.returncode:
        return None, out.stderr.strip()[-200:]
    first = json.loads(out.stdout)["loads"][0]
    return first["gb_per_s"], first.get("why", "")


def safetensors_gbps(files):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    got = [load_file(f, device="cuda:0") for f in files]
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    nbytes = sum(t.numel() * t.element_size() for g in got for t in g.values())
    del got
    torch.cuda.empty_cache()
    return nbytes / dt / 1e9


def main():
    rig, paths = sys.argv[1], sys.argv[2:]
    torch.empty(1, device="cuda:0")
    said = set()
    for r in range(1, ROUNDS + 1):
        for path in paths:
            files = files_of(path)
            name = os.path.basename(os.path.dirname(path) if path.endswith(".json") else path)
            rows = []
            note = evict(files)
            rows.append(("dd O_DIRECT", dd_gbps(files, True), note))
            note = evict(files)
            rows.append(("buffered", dd_gbps(files, False), note))
            note = evict(files)
            got, why = rig_gbps(rig, path)
            rows.append(("rig load", got, note))
            note = evict(files)
            rows.append(("safetensors", safetensors_gbps(files), note))
            best_mode = max(rows[0][1], rows[1][1])
            cells = "  ".join(f"{k} {v:.2f}{n}" if v is not None else f"{k} failed" for k, v, n in rows)
            ratio = f"  rig / faster mode {got / best_mode:.3f}" if got else ""
            print(f"r{r} {name:24s} {cells}{ratio}", flush=True)
            if got and name not in said:
                said.add(name)
                print("    rig's why: " + " ".join(why.split())[:300], flush=True)


if __name__ == "__main__":
    main()
