#!/usr/bin/env bash
# Assembles the slim build the GPU scripts carry (build-slim/, under the 64 MiB a device call takes) from a
# full release build: librig (by its soname), tools/rig, bench/cuda's and bench/load's binaries, the CUDA,
# loader and keeper tests with the counting interposer, the driver suites on CUDA and the core tests that
# take CUDA kinds (RIG_TEST_KINDS), the Python extension's sources (scripts/gpu/pyrig.sh
# compiles them there), and the libraries the device machine lacks (cmocka, xxhash, DLPack's header).
# Usage (repository root, here): scripts/gpu/carry.sh BUILD [SLIM] [OTHER_LIBRIG:NAME...]  each OTHER_LIBRIG
# (another build's librig.so.0.1.0) goes to SLIM/NAME/librig.so.0, for A/B calls (LD_LIBRARY_PATH=SLIM/NAME).
set -eu
b=${1:?usage: scripts/gpu/carry.sh BUILD [SLIM] [LIBRIG:NAME...]}
s=${2:-build-slim}
shift $(( $# > 1 ? 2 : 1 ))
rm -rf "$s" && mkdir -p "$s"/{tools,bench/cuda,bench/load,tests/cuda,tests/load,tests/keep,tests/drivers,tests/core,bindings/python/rig,include}
cp "$b/librig.so.0.1.0" "$s/librig.so.0" && ln -s librig.so.0 "$s/librig.so"
cp "$b/tools/rig" "$s/tools/"
cp "$b/bench/cuda/bench_cuda_chain" "$s/bench/cuda/"
cp "$b/bench/load/bench_load" "$s/bench/load/"
cp "$b"/tests/cuda/{test_cuda_floor,test_cuda_calls,libcountcuda.so} "$s/tests/cuda/"
cp "$b/tests/load/test_load_cuda" "$s/tests/load/"
cp "$b/tests/keep/test_keep_gpu" "$s/tests/keep/"
cp "$b"/tests/drivers/test_driver_{suite,programs,loss}_cuda "$s/tests/drivers/"
cp "$b"/tests/core/test_{model,submit_many,rules} "$s/tests/core/"
cp "$b"/bindings/python/rig/{rig.py,rig_wrap.c} "$s/bindings/python/rig/"
cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 /usr/lib/x86_64-linux-gnu/libxxhash.so.0 "$s/"
cp -r /usr/include/dlpack "$s/include/"
for other in "$@"; do
  mkdir -p "$s/${other#*:}" && cp "${other%%:*}" "$s/${other#*:}/librig.so.0"
done
strip --strip-unneeded "$s"/librig.so.0 "$s"/*/librig.so.0 "$s"/tools/rig "$s"/bench/*/* "$s"/tests/*/* 2>/dev/null || true
du -sh "$s"
