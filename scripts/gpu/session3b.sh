#!/usr/bin/env bash
# The second H200 call of 2026-12-03's third session: issue 34's keeper with one IPC handle per arena (the
# CUDA keeper test with RIG_REQUIRE=cuda, the Python tests with torch, bench/keep/attach.py on 4 GiB
# uniform and MoE files and a 16 GiB 4-shard checkpoint), then issue 36's matrix with NVIDIA's Vulkan ICD
# found as vulkan.sh finds it. Usage (repository root, GPU machine): scripts/gpu/session3b.sh BUILD
# Writes $OUT/session3b.txt.
set -u
B=$(cd "${1:?usage: session3b.sh BUILD}" && pwd)
O=${OUT:-/tmp}
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:$B/tests/cuda:${LD_LIBRARY_PATH:-} RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" 2>/dev/null
{
  date -u
  echo "=== keeper on CUDA (RIG_REQUIRE=cuda)"
  RIG_REQUIRE=cuda timeout 120 "$B/tests/keep/test_keep_cuda" 2>&1 | tail -12
  . scripts/gpu/pyrig.sh
  echo "=== pytest (RIG_REQUIRE=cuda)"
  RIG_TOOL=$B/tools/rig RIG_REQUIRE=cuda timeout 240 python3 -m pytest -q -rs -p no:cacheprovider bindings/python/tests 2>&1 | tail -8
  echo "=== files: 4 GiB uniform and MoE (one load each), a 16 GiB 4-shard checkpoint"
  LAYOUTS="uniform moe" ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts "$B" 2>&1 | tail -6
  LAYOUT_GIB=16 LAYOUTS=sharded ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts16 "$B" 2>&1 | tail -4
  echo "=== keeper (bench/keep/attach.py), 4 GiB"
  timeout 150 python3 bench/keep/attach.py "$B/tools/rig" /tmp/layouts/uniform.safetensors /tmp/layouts/moe.safetensors 2>&1
  echo "=== keeper, 16 GiB 4-shard"
  timeout 120 python3 bench/keep/attach.py "$B/tools/rig" /tmp/layouts16/sharded.d/model.safetensors.index.json 2>&1
} 2>&1 | tee "$O/session3b.txt"
echo "=== issue 36: every pair of the devices present" | tee -a "$O/session3b.txt"
timeout 300 bash scripts/gpu/issue36.sh "$B" 2>&1 | tee -a "$O/session3b.txt"
