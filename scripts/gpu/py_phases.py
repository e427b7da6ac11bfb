#!/usr/bin/env python3
"""Where rig.load_file's time goes beside `rig load`'s (issue 32: Python within 5% of the CLI). In a fresh
process with torch imported and cuda:0 initialised, times each step of what rig.load_file does: the device
opened, the file opened (its header), the load started, every tensor typed as its copies are submitted, the
wait, torch's synchronize; and prints rig's own figure for the load (its stats) beside the whole call's.
Usage (GPU machine, rig's Python package importable): python3 py_phases.py FILE"""
import sys
import time

import torch

torch.cuda.init()
torch.empty(1, device="cuda:0")
torch.cuda.synchronize()
import rig  # noqa: E402
from rig import _safetensors, _typed  # noqa: E402

path = sys.argv[1]
t = [time.perf_counter()]
device = _safetensors._device("cuda:0", "pt")
t.append(time.perf_counter())
with _safetensors.WeightsFile(path) as weights:
    t.append(time.perf_counter())
    with _safetensors.start_load(weights, device) as running:
        t.append(time.perf_counter())
        typed, typer = {}, _typed.Typer("pt")
        for x in sorted(running.tensors, key=lambda x: (x.shard, x.offset)):
            typed[x.index] = typer(running.buffer(x, 0), weights[x.name])
        t.append(time.perf_counter())
        running.wait()
        t.append(time.perf_counter())
        torch.cuda.synchronize()
        t.append(time.perf_counter())
        stats = running.stats
nbytes = sum(v.numel() * v.element_size() for v in typed.values())
steps = ["device", "file", "start", "typed", "wait", "sync"]
ms = {s: (t[i + 1] - t[i]) * 1e3 for i, s in enumerate(steps)}
total = t[-1] - t[0]
print(f"{len(typed)} tensors {nbytes / 1e9:.2f} GB: whole {total * 1e3:.1f} ms ({nbytes / total / 1e9:.1f} GB/s); " +
      ", ".join(f"{s} {v:.1f}" for s, v in ms.items()) +
      f" ms; rig's stats {stats['seconds'] * 1e3:.1f} ms ({nbytes / stats['seconds'] / 1e9:.1f} GB/s), "
      f"first tensor {stats['first_tensor_seconds'] * 1e3:.1f} ms, path {stats['path']}", flush=True)
