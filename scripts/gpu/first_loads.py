#!/usr/bin/env python3
"""Issue 32's first load against its later ones, by how the process loads: `rig load FILE` once (the load's
own staging pool, its tensors in plain device memory), `rig load --repeat 3` (a kept staging pool, the
tensors from the device's reuse pool), the same with RIG_REUSE_POOL=0 (kept staging, plain memory), and with
RIG_CUDA_TIMELINE=memops (each staged chunk's mark a stream memory write, not an event).
VARIANTS="once|repeat" picks some.
Interleaved ROUNDS times, each figure also as a fraction of the pinned link measured in its round (torch),
with the first load's first tensor (ms after its start).
Usage (GPU machine): python3 first_loads.py RIG_BIN FILE..."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "load"))
from layouts import link_gbps  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "2"))
VARIANTS = [("once", [], {}), ("repeat", ["--repeat", "3"], {}),
            ("repeat, RIG_REUSE_POOL=0", ["--repeat", "3"], {"RIG_REUSE_POOL": "0"}),
            ("repeat, memops timeline", ["--repeat", "3"], {"RIG_CUDA_TIMELINE": "memops"})]
VARIANTS = [v for v in VARIANTS if v[0] in os.environ.get("VARIANTS", "|".join(x[0] for x in VARIANTS)).split("|")]


def loads(rig, path, extra, env):
    out = subprocess.run([rig, "load", path, "--device", "cuda:0", "--json"] + extra, capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, **env))
    if out.returncode:
        return None, (out.stderr.strip().splitlines() or ["rc %d" % out.returncode])[-1]
    got = json.loads(out.stdout)["loads"]
    return [l["gb_per_s"] for l in got], got[0]["first_tensor_seconds"] * 1e3


def main():
    rig, files = sys.argv[1], sys.argv[2:]
    for r in range(1, ROUNDS + 1):
        link = link_gbps()
        print(f"round {r}: link {link:.2f} GB/s", flush=True)
        for path in files:
            for name, extra, env in VARIANTS:
                got, err = loads(rig, path, extra, env)
                tag = f"  {os.path.basename(path):22s} {name:26s}"
                if got is None:
                    print(f"{tag} failed: {err}", flush=True)
                    continue
                first_ms = err
                later = f" later {max(got[1:]):.1f} ({max(got[1:]) / link:.3f})" if len(got) > 1 else ""
                print(f"{tag} first {got[0]:.1f} ({got[0] / link:.3f}, first tensor {first_ms:.2f} ms){later}",
                      flush=True)


if __name__ == "__main__":
    main()
