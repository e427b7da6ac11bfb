#!/usr/bin/env bash
# The session's second H200 call: what the first (final.sh) showed broken, run again after the fixes, and
# the figures it lacked. The driver-call table on the real driver through the counting interposer (the
# launches now cover their buffer, the batch table included); issue32.sh with ROUNDS=0 (the Python extension
# built for this python3, pytest with torch, the layout files written, a traced first load); Python's rows
# (rig.load_file typing each tensor as it lands; a python -c process split into its phases); issue 34's
# keeper figures (bench/keep/attach.py) on 4 GiB files and a 16 GiB 4-shard checkpoint, that checkpoint's
# layout rows too. Usage (repository root, GPU machine): scripts/gpu/final2.sh BUILD   Writes $OUT/final2.txt.
set -u
B=$(cd "${1:?usage: final2.sh BUILD}" && pwd)
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:$B/tests/cuda:${LD_LIBRARY_PATH:-} RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx
unset RIG_CUDA_LIBRARY
chmod -R u+x "$B" 2>/dev/null
{
  date -u
  echo "=== driver calls per chained operation and per batch, real driver (count interposer)"
  RIG_REQUIRE=cuda RIG_CUDA_LIBRARY=$B/tests/cuda/libcountcuda.so timeout 60 "$B/tests/cuda/test_cuda_floor" 2>&1 | tail -75
  echo "rc=${PIPESTATUS[0]}"
} 2>&1 | tee "${OUT:-/tmp}/final2.txt"
ROUNDS=0 bash scripts/gpu/issue32.sh "$B" > /dev/null 2>&1
cat "${OUT:-/tmp}/issue32.txt" >> "${OUT:-/tmp}/final2.txt"
export PYTHONPATH=/tmp/pyrig
L=/tmp/layouts
{
  echo "=== python rows"
  ROUNDS=1 timeout 150 python3 bench/load/python_rows.py "$B/tools/rig" $L/uniform.safetensors $L/llama.safetensors \
    $L/moe.safetensors $L/sharded.d/model.safetensors.index.json
  # layouts.py's later loads ran at 0.61-0.83 of the link in the first call while `rig load --repeat 3` run
  # from bash ran 0.95: is it the parent python process, which holds a CUDA context and torch's pinned 1 GiB?
  echo "=== rig load --repeat 3 (uniform): from bash, then from a python parent holding torch's context"
  for r in 1 2; do
    "$B/tools/rig" load $L/uniform.safetensors --device cuda:0 --repeat 3 --json |
      python3 -c 'import json,sys; print("bash parent  ", [round(l["gb_per_s"],1) for l in json.load(sys.stdin)["loads"]])'
    python3 -c 'import json, subprocess, sys, torch
x = torch.empty(1 << 30, dtype=torch.uint8).pin_memory(); y = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:0")
y.copy_(x); torch.cuda.synchronize()
out = subprocess.run([sys.argv[1], "load", sys.argv[2], "--device", "cuda:0", "--repeat", "3", "--json"], capture_output=True, text=True)
print("torch parent ", [round(l["gb_per_s"],1) for l in json.loads(out.stdout)["loads"]])' "$B/tools/rig" $L/uniform.safetensors
  done
  echo "=== keeper (bench/keep/attach.py), 4 GiB"
  timeout 120 python3 bench/keep/attach.py "$B/tools/rig" $L/uniform.safetensors $L/moe.safetensors
  echo "=== 16 GiB 4-shard checkpoint: layout rows, then the keeper"
  rm -rf $L/uniform.safetensors $L/llama.safetensors
  LAYOUT_GIB=16 LAYOUTS=sharded PHASES=1 ROUNDS=1 timeout 150 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts16 "$B"
  timeout 90 python3 bench/keep/attach.py "$B/tools/rig" /tmp/layouts16/sharded.d/model.safetensors.index.json
} 2>&1 | tee -a "${OUT:-/tmp}/final2.txt"
