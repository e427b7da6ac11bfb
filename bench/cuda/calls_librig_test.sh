#!/bin/sh
# cuda-chain-calls-librig: the chain bench's rig rows call librig.so, as issue 35's protocol asks: its
# rig_submit is an undefined dynamic symbol (bound to librig.so at run time), not one linked in from the
# archive that the rows by hand also take parts of (bench/cuda/meson.build says why the order matters).
#   calls_librig_test.sh BENCH_CUDA_CHAIN
set -eu
if nm -D --undefined-only "$1" | grep -q ' rig_submit@'; then
  echo "$1: rig_submit comes from librig.so"
else
  echo "$1 does not call the rig_submit of librig.so (linked statically?)"
  exit 1
fi
