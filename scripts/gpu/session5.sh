#!/usr/bin/env bash
# The H200 calls of 2026-12-04's second session. Part v: NVIDIA's Vulkan ICD with libglvnd carried (the keeper
# on vulkan:0, bench/vulkan's chain: issue 35's dispatch row). Part c: bench/cuda's chain, 101 rounds (issue
# 35's a/b, a/d, edge). Part l: why a fresh process's first load runs below later ones (issue 32): the GPU's
# performance state and PCIe link sampled through `rig load`, each load's trace and phases, the first load
# with the GPU already busy (a kernel that sleeps on one SM, no memory traffic) against it idle, and where a
# kept registration's reload spends its time.
# Usage (repository root, GPU machine): scripts/gpu/session5.sh BUILD [PARTS]   PARTS any of v c l (default
# "v c l"). Writes $OUT/session5.txt.
. scripts/gpu/session-env.sh "${1:-}"
PARTS=${2:-v c l}
smi() { nvidia-smi --query-gpu=pstate,clocks.sm,clocks.mem,pcie.link.gen.gpucurrent,pcie.link.width.current,power.draw \
  --format=csv,noheader "$@"; }
# a kernel that sleeps on one SM for SECONDS, then exits: the GPU busy, the link and memory idle
waker() { python3 -c "
import torch, time, sys
t = time.time() + float(sys.argv[1])
while time.time() < t:
    torch.cuda._sleep(1000000); torch.cuda.synchronize()
" "$1"; }
load() {  # FILE EXTRA...: one fresh `rig load --repeat 3 --json`, each load's GB/s and phases on one line
  local f=$1; shift
  RIG_LOAD_TRACE=${TRACE:-0} "$RIG" load "$f" --device cuda:0 --repeat 3 --json "$@" 2> /tmp/trace.txt |
    python3 -c '
import json, sys
d = json.load(sys.stdin)
for l in d["loads"]:
    p = l["phases"]
    print("  %.1f GB/s %.1f ms first tensor %.1f ms read %.3f wait %.3f alloc %.1f ms submit %.1f ms path %s" % (
        l["gb_per_s"], l["seconds"] * 1e3, l["first_tensor_seconds"] * 1e3, p["read_seconds"],
        p["staging_wait_seconds"], p["alloc_seconds"] * 1e3, p["submit_seconds"] * 1e3, l["path"]))'
  [ "${TRACE:-0}" = 1 ] && grep "trace" /tmp/trace.txt | sed 's/^/    /'
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
  if [[ $PARTS == *v* ]]; then
    echo "=== Vulkan: NVIDIA's ICD with libglvnd carried"
    . scripts/gpu/vulkan-env.sh
    vulkan_env "$B"
    VK_LOADER_DEBUG=error,warn,driver timeout 30 "$B/tests/keep/test_keep_gpu" 2>&1 | grep -i "nvidia\|icd\|error\|driver" | head -12
    RIG_KEEP_DEVICE=vulkan:0 RIG_REQUIRE=vulkan timeout 60 "$B/tests/keep/test_keep_gpu" 2>&1 | tail -6
    timeout 120 "$B/bench/vulkan/bench_vulkan_chain" 512 101 2>&1 | tail -14
    unset VK_DRIVER_FILES VK_ICD_FILENAMES RIG_VULKAN_LIBRARY
  fi
  if [[ $PARTS == *c* ]]; then
    echo "=== bench/cuda chain 2048 101 1"
    timeout 200 "$B/bench/cuda/bench_cuda_chain" 2048 101 1 2>&1 | tail -30
  fi
  if [[ $PARTS == *l* ]]; then
    echo "=== files (layouts.py, one round with phases)"
    LAYOUTS="uniform moe" ROUNDS=1 PHASES=1 timeout 150 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | tail -24
    U=/tmp/layouts/uniform.safetensors M=/tmp/layouts/moe.safetensors
    echo "--- idle state"; sleep 3; smi
    echo "--- sampled every 10 ms through a fresh rig load of the uniform file (idle before)"
    smi -lms 10 > /tmp/smi.txt & S=$!
    sleep 0.3; TRACE=1 load $U; sleep 0.3; kill $S; wait $S 2>/dev/null
    awk '{c[$0]++; if (!(($0) in o)) {o[$0]=++n; l[n]=$0}} END {for (i=1;i<=n;i++) print "  " c[l[i]] "x " l[i]}' /tmp/smi.txt | head -20
    for r in 1 2 3; do
      for f in $U $M; do
        echo "--- round $r $(basename $f): idle (3 s sleep first)"; sleep 3; smi; TRACE=1 load $f
        echo "--- round $r $(basename $f): a sleeping kernel running through the load"
        waker 6 & W=$!; sleep 2.5; smi; load $f; kill $W 2>/dev/null; wait $W 2>/dev/null
        echo "--- round $r $(basename $f): kept registration, traced"
        TRACE=1 load $f --keep-registered
      done
    done
    echo "--- bench_load on the uniform file's size (its own file), staged only"
    timeout 120 "$B/bench/load/bench_load" /tmp/bl.safetensors --device cuda:0 --make-gib 4 2>&1 | tail -40
  fi
  date -u
} 2>&1 | tee "$O/session5.txt"
