#!/usr/bin/env bash
# The third H200 call of 2026-12-03's third session: why a 16 GiB 4-shard checkpoint's attach took 188-199 ms
# (1461 tensors) where 4 GiB MoE's took 55-61 ms (1341): bench/keep/attach.py's attach row with the client
# under the counting interposer (its IPC opens), as torch tensors and as rig buffers, and test_keep_cuda with
# RIG_REQUIRE=cuda. Usage (repository root, GPU machine): scripts/gpu/session3c.sh BUILD
set -u
B=$(cd "${1:?usage: session3c.sh BUILD}" && pwd)
O=${OUT:-/tmp}
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:$B/tests/cuda:${LD_LIBRARY_PATH:-} RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" 2>/dev/null
{
  date -u
  echo "=== keeper on CUDA (RIG_REQUIRE=cuda)"
  RIG_REQUIRE=cuda timeout 120 "$B/tests/keep/test_keep_cuda" 2>&1 | tail -8
  . scripts/gpu/pyrig.sh
  LAYOUTS="moe" ROUNDS=0 timeout 100 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts "$B" 2>&1 | tail -2
  LAYOUT_GIB=16 LAYOUTS=sharded ROUNDS=0 timeout 150 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts16 "$B" 2>&1 | tail -2
  for f in /tmp/layouts/moe.safetensors /tmp/layouts16/sharded.d/model.safetensors.index.json; do
    for fw in pt rig; do
      echo "=== attach, framework $fw, client counted: $f"
      ATTACH_FRAMEWORK=$fw ATTACH_ONLY=1 RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so timeout 100 python3 bench/keep/attach.py "$B/tools/rig" $f 2>&1 | grep -E "attach|exit"
    done
  done
} 2>&1 | tee "$O/session3c.txt"
