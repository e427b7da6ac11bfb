#!/usr/bin/env python3
"""Python's rig.load_file against `rig load` and safetensors, on files bench/load/layouts.py wrote
(issue 32's "rig.load_file from Python within 5% of rig load" and "the whole python -c process at least 10x
faster than the same line with safetensors").

Per file and ROUNDS times, interleaved:
  - `rig load FILE --device cuda:0 --json` in a fresh process: the first load's GB/s (its pool made inside);
  - rig.load_file(FILE, device="cuda:0") timed inside a fresh Python process (torch imported and cuda:0
    initialised before the clock starts, as a user's program has them), to torch.cuda.synchronize();
  - the whole `python3 -c` process for rig.load_file and for safetensors.torch.load_file, start to exit.

Usage (on the GPU machine, with rig's Python package importable): python3 bench/load/python_rows.py RIG_BIN FILE...
"""
import json
import os
import subprocess
import sys
import time

ROUNDS = int(os.environ.get("ROUNDS", "3"))

INSIDE = r"""
import sys, time, torch, rig
torch.cuda.init(); torch.empty(1, device="cuda:0"); torch.cuda.synchronize()
path = sys.argv[1]
t0 = time.perf_counter()
w = rig.load_file(path, device="cuda:0")
torch.cuda.synchronize()
dt = time.perf_counter() - t0
n = sum(t.numel() * t.element_size() for t in w.values())
print(n / dt / 1e9, len(w))
"""

RIG_LINE = ("import rig, torch; w = rig.load_file({p!r}, device='cuda:0'); torch.cuda.synchronize(); "
            "print(len(w))")
ST_LINE = ("import torch; from safetensors.torch import load_file; w = load_file({p!r}, device='cuda:0'); "
           "torch.cuda.synchronize(); print(len(w))")


def rig_first(rig_bin, path):
    out = subprocess.run([rig_bin, "load", path, "--device", "cuda:0", "--json"], capture_output=True, text=True,
                         timeout=300)
    if out.returncode:
        return None
    return json.loads(out.stdout)["loads"][0]["gb_per_s"]


def whole(line):
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", line], capture_output=True, text=True, timeout=300)
    dt = time.perf_counter() - t0
    return dt if out.returncode == 0 else None, out.stderr.strip().splitlines()[-1:] if out.returncode else None


def main():
    rig_bin, files = sys.argv[1], sys.argv[2:]
    for r in range(1, ROUNDS + 1):
        for path in files:
            name = os.path.basename(path)
            cli = rig_first(rig_bin, path)
            out = subprocess.run([sys.executable, "-c", INSIDE, path], capture_output=True, text=True, timeout=300)
            if out.returncode:
                print(f"r{r} {name:28s} rig.load_file failed: {out.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            py, count = out.stdout.split()
            py = float(py)
            ratio = f"{py / cli:.3f}" if cli else "n/a"
            print(f"r{r} {name:28s} {count:>5s} tensors  rig load {cli or 0:.1f} GB/s  rig.load_file {py:.1f} GB/s "
                  f"(python/cli {ratio})", flush=True)
            t_rig, e1 = whole(RIG_LINE.format(p=path))
            t_st, e2 = whole(ST_LINE.format(p=path))
            if t_rig and t_st:
                print(f"r{r} {name:28s} python -c process: rig {t_rig:.2f} s  safetensors {t_st:.2f} s  "
                      f"(safetensors/rig {t_st / t_rig:.1f}x)", flush=True)
            else:
                print(f"r{r} {name:28s} python -c failed: rig {e1} safetensors {e2}", flush=True)


if __name__ == "__main__":
    main()
