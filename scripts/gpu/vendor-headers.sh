#!/usr/bin/env bash
# rig's own CUDA declarations (src/drivers/cuda/cu.h, src/drivers/stream/calls.h) checked against the CUDA
# Toolkit's cuda.h on the GPU machine. Builds nothing of rig: one compile of tests/drivers/
# test_vendor_headers_cuda.cpp, whose static assertions are the check (a wrong declaration fails the compile
# naming it), then its one line. Usage: scripts/gpu/vendor-headers.sh   (from the repository root)
# Log: $OUT/vendor-headers/cuda.log; exit status 0 when the declarations match.
set -u
logs=${OUT:-/tmp/out}/vendor-headers
mkdir -p "$logs"
inc=${CUDA_INCLUDE:-/usr/local/cuda/include}
cxx=${CXX:-g++}
{
  echo "cuda.h from $inc: $(grep -m1 '#define CUDA_VERSION' "$inc/cuda.h" 2>&1)"
  "$cxx" -std=c++20 -I"$inc" -Isrc -Iinclude tests/drivers/test_vendor_headers_cuda.cpp -o "$logs/check" &&
    "$logs/check"
} > "$logs/cuda.log" 2>&1
rc=$?
cat "$logs/cuda.log"
exit $rc
