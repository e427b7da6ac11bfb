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

# Each line prints when its imports ended and when its tensors were on the GPU (time.time()), so a
# process's seconds split into start and imports, the load itself, and exit (the rest).
STAMPS = "import time; t_imp = time.time(); "
RIG_LINE = ("import rig, torch; " + STAMPS + "w = rig.load_file({p!r}, device='cuda:0'); torch.cuda.synchronize(); "
            "print(len(w), t_imp, time.time())")
# safetensors opens one file: a sharded checkpoint is its index's shards, one load_file each.
ST_LINE = ("import json, os, torch; from safetensors.torch import load_file; " + STAMPS +
           "p = {p!r}; d = os.path.dirname(p); "
           "files = sorted(set(json.load(open(p))['weight_map'].values())) if p.endswith('.json') else [p]; "
           "w = {{}}; [w.update(load_file(os.path.join(d, f) if p.endswith('.json') else f, device='cuda:0')) "
           "for f in files]; torch.cuda.synchronize(); print(len(w), t_imp, time.time())")


def rig_first(rig_bin, path):
    out = subprocess.run([rig_bin, "load", path, "--device", "cuda:0", "--json"], capture_output=True, text=True,
                         timeout=300)
    if out.returncode:
        return None
    return json.loads(out.stdout)["loads"][0]["gb_per_s"]


def whole(line):
    """(seconds, (imports, load, exit) seconds) of a `python3 -c line` process, or (None, its last error)."""
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", line], capture_output=True, text=True, timeout=300)
    t_end = time.time()
    if out.returncode:
        return None, out.stderr.strip().splitlines()[-1:]
    _, t_imp, t_loaded = out.stdout.split()
    t_imp, t_loaded = float(t_imp), float(t_loaded)
    return t_end - t0, (t_imp - t0, t_loaded - t_imp, t_end - t_loaded)


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
                phases = lambda p: "start+imports %.2f, load %.2f, exit %.2f" % p
                print(f"r{r} {name:28s} python -c process: rig {t_rig:.2f} s  safetensors {t_st:.2f} s  "
                      f"(safetensors/rig {t_st / t_rig:.1f}x; rig's {phases(e1)}; safetensors' {phases(e2)})",
                      flush=True)
            else:
                print(f"r{r} {name:28s} python -c failed: rig {e1} safetensors {e2}", flush=True)


if __name__ == "__main__":
    main()
