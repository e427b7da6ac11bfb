#!/usr/bin/env python3
"""Issue 34: what a keeper's attach costs against the tensor count and the bytes, apart. Writes sparse
safetensors files (zeros, no disk writes) of COUNT tensors of SIZE bytes each, serves each with `rig keep`
on cuda:0 and attaches five times with rig.attach(framework="rig"), timing every tensor's a.buffer(i) call:
the slow calls are the ones that open a keeper arena's IPC handle (the first tensor of each arena), the
rest rig's own per-tensor work.

The last two rows are bench/load/layouts.py's Llama-like 16 GiB layout (sparse, U8) in one file and in 4
shards. ATTACH_TORCH=1 makes the client an engine's: torch imported and cuda:0 initialised before attaching;
ATTACH_FRAMEWORK=pt|np|rig times rig.attach(framework=...) whole instead (every tensor typed and shaped).

Usage (GPU machine, rig's Python package importable): python3 bench/keep/attach_sizes.py RIG_BIN DIR
"""
import json
import os
import struct
import subprocess
import sys
import time

import rig

# (count, bytes a tensor), then the Llama-like 16 GiB layout of bench/load/layouts.py in one file and in 4 shards.
# ATTACH_SHAPES picks rows by label ("64x4096 llama ..."); "llama2m" rounds each Llama tensor up to 2 MiB and
# "llamasorted" orders them largest first (which of layout and order the IPC opens' cost follows).
SHAPES = [(64, 4096), (1461, 4096), (64, 256 << 20), (1461, 12 << 20), "llama", "llama4"]
EXTRA = [(160, 103 << 20), (64, 64 << 20), (1341, 3 << 20), "llama2m", "llamasorted"]


def llama_sizes(total_bytes):
    """bench/load/layouts.py's Llama-like bf16 decoder (hidden 2048, MLP 5632, vocab 64000) as {name: bytes}."""
    hidden, inter, vocab = 2048, 5632, 64000
    t = {"model.embed_tokens.weight": 2 * vocab * hidden, "lm_head.weight": 2 * vocab * hidden,
         "model.norm.weight": 2 * hidden}
    layer = 2 * (4 * hidden * hidden + 3 * hidden * inter + 2 * hidden)
    for i in range(max(1, (total_bytes - 4 * vocab * hidden) // layer)):
        p = "model.layers.%d." % i
        for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
            t[p + "self_attn." + n + ".weight"] = 2 * hidden * hidden
        for n in ("gate_proj", "up_proj", "down_proj"):
            t[p + "mlp." + n + ".weight"] = 2 * hidden * inter
        t[p + "input_layernorm.weight"] = 2 * hidden
        t[p + "post_attention_layernorm.weight"] = 2 * hidden
    return t


def write_file(path, sizes):
    """A sparse safetensors file (zeros, no disk writes) of {name: bytes}, each tensor U8 of that length."""
    header, off = {}, 0
    for name, size in sizes.items():
        header[name] = {"dtype": "U8", "shape": [size], "data_offsets": [off, off + size]}
        off += size
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.truncate(8 + len(h) + off)


def label(shape):
    return shape if isinstance(shape, str) else "%dx%d" % shape


def write(d, shape):
    """The checkpoint for one row: its path (a file or a sharded index), tensor count and bytes."""
    if isinstance(shape, str):
        sizes = llama_sizes(16 << 30)
        shards = 4 if shape == "llama4" else 1
        if shape == "llama2m":
            sizes = {n: (b + (2 << 20) - 1) // (2 << 20) * (2 << 20) for n, b in sizes.items()}
        if shape == "llamasorted":
            sizes = dict(sorted(sizes.items(), key=lambda kv: -kv[1]))
    else:
        count, size = shape
        sizes = {"t.%d" % i: size for i in range(count)}
        shards = 1
    names = list(sizes)
    total = sum(sizes.values())
    if shards == 1:
        path = os.path.join(d, "%s.safetensors" % (shape if isinstance(shape, str) else "t%d_%d" % shape))
        write_file(path, sizes)
        return path, len(names), total
    per = (len(names) + shards - 1) // shards
    weight_map = {}
    for k in range(shards):
        fn = "model-%05d-of-%05d.safetensors" % (k + 1, shards)
        part = names[k * per:(k + 1) * per]
        write_file(os.path.join(d, fn), {n: sizes[n] for n in part})
        weight_map.update((n, fn) for n in part)
    path = os.path.join(d, "model.safetensors.index.json")
    with open(path, "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    return path, len(names), total


def attach_once(sock):
    framework = os.environ.get("ATTACH_FRAMEWORK")
    if framework:  # the whole of rig.attach(framework=...), as an engine calls it: no per-tensor split
        t0 = time.perf_counter()
        tensors = rig.attach(sock, framework=framework, device="cuda:0")
        total = time.perf_counter() - t0
        del tensors
        return total, 0.0, []
    t0 = time.perf_counter()
    a = rig.Attachment(sock, device="cuda:0")
    connect = time.perf_counter() - t0
    calls = []
    for t in a.tensors:
        c0 = time.perf_counter()
        buf, _ = a.buffer(t.index)
        calls.append(time.perf_counter() - c0)
        buf.close()
    total = time.perf_counter() - t0
    a.close()
    return total, connect, calls


def main():
    rig_bin, d = sys.argv[1], sys.argv[2]
    if os.environ.get("ATTACH_TORCH") == "1":  # a client as an engine is one: torch imported, cuda:0 initialised
        import torch
        torch.empty(1, device="cuda:0")
        torch.cuda.synchronize()
    os.makedirs(d, exist_ok=True)
    wanted = os.environ.get("ATTACH_SHAPES", "").split()
    shapes = [s for s in SHAPES + EXTRA if label(s) in wanted] if wanted else SHAPES
    for shape in shapes:
        path, count, nbytes = write(d, shape)
        sock = os.path.join(d, "sock")
        keeper = subprocess.Popen([rig_bin, "keep", path, "--device", "cuda:0", "--socket", sock],
                                  stderr=subprocess.PIPE, text=True)
        for line in keeper.stderr:
            if "loaded" in line or "failed" in line:
                break
        rows = []
        for _ in range(5):
            total, connect, calls = attach_once(sock)
            over = [c for c in calls if c > 1e-3]
            if not rows:
                slow_first = ["#%d %.1f" % (i, c * 1e3) for i, c in enumerate(calls) if c > 1e-3]
            rest = total - connect - sum(over)
            rows.append("%.1f ms (connect %.1f ms; %d calls over 1 ms: %.1f ms; the rest %.1f us a call)" % (
                total * 1e3, connect * 1e3, len(over), sum(over) * 1e3,
                rest * 1e6 / max(1, len(calls) - len(over))))
        name = shape if isinstance(shape, str) else "%d bytes each" % shape[1]
        print("%5d tensors, %-16s (%.2f GiB): %s" % (count, name, nbytes / (1 << 30), rows[0]), flush=True)
        if slow_first:
            print("%48s the first attach's slow calls: %s ms" % ("", " ".join(slow_first)))
        for r in rows[1:]:
            print("%48s %s" % ("", r), flush=True)
        keeper.terminate()
        keeper.wait(timeout=60)
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))


if __name__ == "__main__":
    main()
