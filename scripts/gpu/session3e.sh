#!/usr/bin/env bash
# The last H200 call of 2026-12-03's third session, after arenas in whole 2 MiB pages and the typed-tensor
# caches: bench/keep/attach_sizes.py as torch tensors from a torch client, then bench/load/layouts.py (4 GiB
# uniform and MoE, 16 GiB in 4 shards, one round: the loader after the page rounding) and bench/keep/attach.py
# (ATTACH_ONLY=1) on those files as written by safetensors.torch.save_file.
# Usage (repository root, GPU machine): scripts/gpu/session3e.sh BUILD   Writes $OUT/session3e.txt.
set -u
B=$(cd "${1:?usage: session3e.sh BUILD}" && pwd)
O=${OUT:-/tmp}
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" 2>/dev/null
{
  date -u
  . scripts/gpu/pyrig.sh
  echo "=== attach as torch tensors, torch client (attach_sizes.py, ATTACH_FRAMEWORK=pt)"
  ATTACH_TORCH=1 ATTACH_FRAMEWORK=pt ATTACH_SHAPES="64x67108864 1341x3145728 llama llama4" \
    timeout 120 python3 bench/keep/attach_sizes.py "$B/tools/rig" /tmp/sizes 2>&1
  echo "=== files: 4 GiB uniform and MoE, 16 GiB in 4 shards (bench/load/layouts.py, one round)"
  LAYOUTS="uniform moe" ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts "$B" 2>&1 | tail -6
  LAYOUT_GIB=16 LAYOUTS=sharded ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts16 "$B" 2>&1 | tail -4
  echo "=== keeper attach on those files (bench/keep/attach.py, ATTACH_ONLY=1)"
  ATTACH_ONLY=1 timeout 120 python3 bench/keep/attach.py "$B/tools/rig" /tmp/layouts/uniform.safetensors \
    /tmp/layouts/moe.safetensors /tmp/layouts16/sharded.d/model.safetensors.index.json 2>&1
} 2>&1 | tee "$O/session3e.txt"
