#!/usr/bin/env bash
# The H200 calls of 2026-12-04's session. Part a: the Python suite with torch on the GPU (typed tensors now
# cross DLPack typed and shaped; the PyTorch keeper client), the keeper's attach as torch tensors
# (attach_sizes.py), one try of NVIDIA's Vulkan ICD (the keeper on vulkan:0, bench/vulkan's chain). Part b:
# files safetensors.torch.save_file wrote (layouts.py: 4 GiB uniform and MoE, 16 GiB in 4 shards, loads of
# each), the keeper on them (attach.py: tensor 0's kernel, attach times, 1000 cycles, SIGTERM) and
# rig.load_file against `rig load` (python_rows.py).
# Usage (repository root, GPU machine): scripts/gpu/session4.sh BUILD [PART]   PART a, b or ab (default;
# more than one call's 600 s). Writes $OUT/session4-PART.txt and $OUT/pytest.log.
set -u
B=$(cd "${1:?usage: session4.sh BUILD [PART]}" && pwd)
O=${OUT:-/tmp}
PART=${2:-ab}
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" 2>/dev/null
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  . scripts/gpu/pyrig.sh
  python3 -c 'import torch, rig; print("torch", torch.__version__, "rig", rig.__version__)'
  if [[ $PART == *a* ]]; then
    echo "=== pytest (RIG_REQUIRE=cuda, torch on the GPU)"
    RIG_REQUIRE=cuda RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx RIG_TOOL=$B/tools/rig \
      timeout 200 python3 -m pytest -q -rs -p no:cacheprovider bindings/python/tests > "$O/pytest.log" 2>&1
    echo "pytest exit $?"
    tail -15 "$O/pytest.log"
    echo "=== attach as torch tensors, torch client (attach_sizes.py, ATTACH_FRAMEWORK=pt)"
    ATTACH_TORCH=1 ATTACH_FRAMEWORK=pt ATTACH_SHAPES="64x67108864 1341x3145728 llama llama4" \
      timeout 120 python3 bench/keep/attach_sizes.py "$B/tools/rig" /tmp/sizes 2>&1 | grep -v "^ *$"
    rm -rf /tmp/sizes
    echo "=== Vulkan: NVIDIA's ICD, the keeper on vulkan:0, bench/vulkan's chain"
    . scripts/gpu/vulkan-env.sh
    vulkan_env "$B"
    [ -n "${manifest:-}" ] && cat "$manifest" && ldconfig -p | grep -i "GLX_nvidia\|nvidia-glcore\|libnvidia-gpucomp" | head
    VK_LOADER_DEBUG=error,warn,driver timeout 30 "$B/tests/keep/test_keep_gpu" 2>&1 | grep -i "nvidia\|icd\|error\|driver" | head -20
    RIG_KEEP_DEVICE=vulkan:0 RIG_REQUIRE=vulkan timeout 60 "$B/tests/keep/test_keep_gpu" 2>&1 | tail -8
    timeout 90 "$B/bench/vulkan/bench_vulkan_chain" 512 101 2>&1 | tail -12
  fi
  if [[ $PART == *b* ]]; then
    echo "=== files: 4 GiB uniform and MoE, 16 GiB in 4 shards (bench/load/layouts.py, one round)"
    LAYOUTS="uniform moe" ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts "$B" 2>&1 | tail -6
    LAYOUT_GIB=16 LAYOUTS=sharded ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts16 "$B" 2>&1 | tail -4
    echo "=== keeper on those files (bench/keep/attach.py: tensor 0's kernel, attach, 1000 cycles, SIGTERM)"
    timeout 200 python3 bench/keep/attach.py "$B/tools/rig" /tmp/layouts/moe.safetensors \
      /tmp/layouts16/sharded.d/model.safetensors.index.json 2>&1
    echo "=== rig.load_file against rig load (python_rows.py, one round)"
    ROUNDS=1 timeout 80 python3 bench/load/python_rows.py "$B/tools/rig" /tmp/layouts/uniform.safetensors \
      /tmp/layouts/moe.safetensors 2>&1 | tail -10
  fi
  date -u
} 2>&1 | tee "$O/session4-$PART.txt"
