#!/usr/bin/env python3
"""The loader on the layouts users load, side by side in one run (issue 32's "speed on every layout").

Writes each layout with the format's own library (safetensors.torch.save_file), warms it, then, interleaved
ROUNDS times: the pinned link (torch: one pinned host tensor copied to cuda:0, the limit), `rig load` in a
fresh process through each LIBDIR (first load with its pool's making counted, then later loads through a
kept pool, then a kept registration), and safetensors.load_file(device="cuda:0"). Every rig figure is also
printed as a fraction of the link measured in the same round.

Layouts: uniform (64 MiB tensors), llama (two large embeddings, mid-size attention and MLP matrices, tiny
norms), moe (hundreds of small expert matrices), and the llama file split in 4 shards where the loader takes
a sharded checkpoint (its index.json).

Usage (on the GPU machine): python3 bench/load/layouts.py RIG_BIN OUTDIR LIBDIR [LIBDIR...]
  LAYOUT_GIB (default 4), ROUNDS (default 3), LAYOUTS (default "uniform llama moe sharded"), PHASES=1 (each
  load's phases). The files stay in
  OUTDIR (bench/load/python_rows.py takes them).
"""
import json
import os
import subprocess
import sys
import time

import torch
from safetensors.torch import load_file, save_file

GIB = float(os.environ.get("LAYOUT_GIB", "4"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
LAYOUTS = os.environ.get("LAYOUTS", "uniform llama moe sharded").split()
PHASES = os.environ.get("PHASES") == "1"  # print each load's phases (rig_load_stats) under its row


def llama_tensors(total_bytes):
    # A Llama-like decoder in bf16: vocab 64000 x hidden 2048 embeddings (in and out), per layer q,k,v,o
    # (hidden x hidden), gate, up, down (hidden x 5632), two norms (hidden); as many layers as fit.
    hidden, inter, vocab = 2048, 5632, 64000
    t = {"model.embed_tokens.weight": (vocab, hidden), "lm_head.weight": (vocab, hidden),
         "model.norm.weight": (hidden,)}
    layer_bytes = 2 * (4 * hidden * hidden + 3 * hidden * inter + 2 * hidden)
    layers = max(1, int((total_bytes - 2 * 2 * vocab * hidden) // layer_bytes))
    for i in range(layers):
        p = f"model.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
            t[p + "self_attn." + n + ".weight"] = (hidden, hidden)
        t[p + "mlp.gate_proj.weight"] = (inter, hidden)
        t[p + "mlp.up_proj.weight"] = (inter, hidden)
        t[p + "mlp.down_proj.weight"] = (hidden, inter)
        t[p + "input_layernorm.weight"] = (hidden,)
        t[p + "post_attention_layernorm.weight"] = (hidden,)
    return t


def moe_tensors(total_bytes):
    # A mixture of experts in bf16: per layer 32 experts of three 1024 x 1536 matrices, a router, norms.
    hidden, inter, experts = 1024, 1536, 32
    t = {"model.embed_tokens.weight": (32000, hidden), "model.norm.weight": (hidden,)}
    layer_bytes = 2 * (experts * 3 * hidden * inter + 4 * hidden * hidden + experts * hidden + 2 * hidden)
    layers = max(1, int((total_bytes - 2 * 32000 * hidden) // layer_bytes))
    for i in range(layers):
        p = f"model.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
            t[p + "self_attn." + n + ".weight"] = (hidden, hidden)
        t[p + "block_sparse_moe.gate.weight"] = (experts, hidden)
        for e in range(experts):
            q = f"{p}block_sparse_moe.experts.{e}."
            t[q + "w1.weight"] = (inter, hidden)
            t[q + "w2.weight"] = (hidden, inter)
            t[q + "w3.weight"] = (inter, hidden)
        t[p + "input_layernorm.weight"] = (hidden,)
        t[p + "post_attention_layernorm.weight"] = (hidden,)
    return t


def uniform_tensors(total_bytes):
    n = max(1, int(total_bytes // (64 << 20)))
    return {f"t{i}": (32 << 20,) for i in range(n)}


def materialize(shapes):
    # Drawn on the GPU: the bytes' values do not matter to a load, the minutes of a host randn do.
    torch.manual_seed(1)
    return {k: torch.randn(s, dtype=torch.bfloat16, device="cuda:0").cpu() for k, s in shapes.items()}


def write(path, shapes, shards=1):
    tensors = materialize(shapes)
    if shards == 1:
        save_file(tensors, path, metadata={"format": "pt"})
        return path, len(tensors), sum(t.numel() * 2 for t in tensors.values())
    # Hugging Face's layout: model-0000k-of-0000n.safetensors beside model.safetensors.index.json.
    os.makedirs(path, exist_ok=True)
    names = list(tensors)
    per = (len(names) + shards - 1) // shards
    weight_map, total = {}, 0
    for k in range(shards):
        part = names[k * per:(k + 1) * per]
        fn = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        save_file({n: tensors[n] for n in part}, os.path.join(path, fn), metadata={"format": "pt"})
        for n in part:
            weight_map[n] = fn
            total += tensors[n].numel() * 2
    index = os.path.join(path, "model.safetensors.index.json")
    with open(index, "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    return index, len(names), total


def link_gbps(nbytes=1 << 30):
    src = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
    dst = torch.empty(nbytes, dtype=torch.uint8, device="cuda:0")
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize()
        best = max(best, nbytes / (time.perf_counter() - t0) / 1e9)
    return best


def rig_loads(rig, lib, path, extra):
    env = dict(os.environ, LD_LIBRARY_PATH=lib + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    env.pop("RIG_CUDA_LIBRARY", None)
    out = subprocess.run([rig, "load", path, "--device", "cuda:0", "--json"] + extra, env=env,
                         capture_output=True, text=True, timeout=300)
    if out.returncode:
        return None, out.stderr.strip().splitlines()[-1:] or ["rc %d" % out.returncode]
    loads = json.loads(out.stdout)["loads"]
    if PHASES:
        for i, l in enumerate(loads):
            ph = l["phases"]
            print(f"    load {i}: {l['gb_per_s']:.1f} GB/s {l['seconds'] * 1e3:.1f} ms path {l['path']} "
                  f"first tensor {l['first_tensor_seconds'] * 1e3:.1f} ms staging {l['staging_bytes'] >> 20} MiB "
                  f"read {ph['read_seconds']:.3f} s wait {ph['staging_wait_seconds']:.3f} s "
                  f"alloc {ph['alloc_seconds'] * 1e3:.1f} ms submit {ph['submit_seconds'] * 1e3:.1f} ms", flush=True)
    return [l["gb_per_s"] for l in loads], None


def safetensors_gbps(path, nbytes):
    if path.endswith(".json"):
        files = sorted({os.path.join(os.path.dirname(path), f)
                        for f in json.load(open(path))["weight_map"].values()})
    else:
        files = [path]
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = [load_file(f, device="cuda:0") for f in files]
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    del out
    torch.cuda.empty_cache()
    return nbytes / dt / 1e9


def main():
    rig, outdir, libs = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(outdir, exist_ok=True)
    total = int(GIB * (1 << 30))
    files = {}
    for name in LAYOUTS:
        shapes = {"uniform": uniform_tensors, "llama": llama_tensors, "moe": moe_tensors,
                  "sharded": llama_tensors}[name](total)
        path = os.path.join(outdir, name + (".d" if name == "sharded" else ".safetensors"))
        t0 = time.perf_counter()
        files[name] = write(path, shapes, shards=4 if name == "sharded" else 1)
        print(f"{name}: {files[name][1]} tensors, {files[name][2] / 1e9:.2f} GB, written in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    subprocess.run("sync", shell=True)
    for name, (path, _, _) in files.items():
        d = path if os.path.isdir(path) else os.path.dirname(path)
        subprocess.run(f"cat {d}/*.safetensors > /dev/null" if name == "sharded" else f"cat {path} > /dev/null",
                       shell=True)
    for r in range(1, ROUNDS + 1):
        link = link_gbps()
        print(f"round {r} link {link:.2f} GB/s", flush=True)
        for name, (path, count, nbytes) in files.items():
            for lib in libs:
                tag = f"r{r} {name:8s} {os.path.basename(lib.rstrip('/')):12s}"
                first, err = rig_loads(rig, lib, path, ["--repeat", "3"])
                if err:
                    print(f"{tag} rig load: refused: {' '.join(err)}", flush=True)
                    continue
                kept, err2 = rig_loads(rig, lib, path, ["--repeat", "3", "--keep-registered"])
                print(f"{tag} first {first[0]:.1f} ({first[0] / link:.3f}) later "
                      f"{max(first[1:]):.1f} ({max(first[1:]) / link:.3f}) kept "
                      + (f"{max(kept[1:]):.1f} ({max(kept[1:]) / link:.3f})" if kept else f"refused {err2}"),
                      flush=True)
            st = safetensors_gbps(path, nbytes)
            print(f"r{r} {name:8s} safetensors.load_file {st:.2f} GB/s ({st / link:.3f})", flush=True)


if __name__ == "__main__":
    main()
