#!/usr/bin/env bash
# Issue 36 on the GPU machine: the README's program on every pair of the devices present (RIG_REQUIRE=cuda,vulkan),
# 10,000 neighbouring heap pairs on cuda:0 and vulkan:0, Vulkan's host import tests on NVIDIA's driver, and the
# split copy's hand-over cost (bench_cuda_split_copy). Usage (repository root): scripts/gpu/issue36.sh BUILD
set -u
B=$(cd "${1:?usage: issue36.sh BUILD}" && pwd)
chmod -R u+x "$B" 2>/dev/null
unset RIG_CUDA_LIBRARY
export LD_LIBRARY_PATH=$B
# The Vulkan loader carried in $B/vulkan-debs and NVIDIA's ICD (vulkan-env.sh, as vulkan.sh does).
source "$(dirname "${BASH_SOURCE[0]}")/vulkan-env.sh"
vulkan_env "$B"
"$B/tools/rig" devices
step() { echo "=== $*"; timeout 180 "$@" 2>&1 | tail -25; echo "=== rc=${PIPESTATUS[0]}"; }
step env RIG_REQUIRE=vulkan "$B/tests/core/test_pairs" README.md
[ -n "${ONLY_VULKAN:-}" ] || step env RIG_REQUIRE=cuda RIG_TEST_KINDS=cuda RIG_TEST_PAIRS=10000 "$B/tests/core/test_neighbours"
step env RIG_REQUIRE=vulkan RIG_TEST_KINDS=vulkan RIG_TEST_PAIRS=10000 "$B/tests/core/test_neighbours"
step env RIG_REQUIRE=vulkan RIG_TEST_KINDS=memory+vulkan "$B/tests/core/test_seed"
step env RIG_REQUIRE=vulkan RIG_VULKAN_VALIDATION=0 "$B/tests/vulkan/test_vulkan_import"
[ -n "${ONLY_VULKAN:-}" ] || step env RIG_REQUIRE=cuda "$B/bench/cuda/bench_cuda_split_copy" 2048 51 cuda:0
