#!/usr/bin/env bash
# One H200 call for issue 32's figures: the Python binding's tests with torch (RIG_REQUIRE=cuda), the loader
# on every layout with each load's phases (bench/load/layouts.py, PHASES=1), a traced first load, and Python's
# rows (bench/load/python_rows.py: rig.load_file against `rig load`, whole `python -c` processes against
# safetensors). The image's python3 is not the one the build's extension was made for, so the SWIG wrapper
# the build generated (rig_wrap.c) is compiled here against that python3 and the carried librig (the build
# carries dlpack/dlpack.h under BUILD/include: the image has no libdlpack-dev).
# Usage (repository root, on the GPU machine): scripts/gpu/issue32.sh BUILD   Writes $OUT/issue32.txt.
set -u
B=$(cd "${1:?usage: issue32.sh BUILD}" && pwd)
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
unset RIG_CUDA_LIBRARY
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 --version
  . scripts/gpu/pyrig.sh
  python3 -c 'import rig; print("rig", rig.__version__, rig.device_list())'
  echo "=== pytest (RIG_REQUIRE=cuda)"
  RIG_TOOL=$B/tools/rig RIG_REQUIRE=cuda RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx timeout 240 python3 -m pytest -q -rs \
    -p no:cacheprovider bindings/python/tests 2>&1 | tail -25
  echo "=== layouts with phases"
  PHASES=1 ROUNDS=${ROUNDS:-1} timeout 240 python3 bench/load/layouts.py "$B/tools/rig" /tmp/layouts "$B" 2>&1
  echo "=== a traced first load"
  for f in uniform.safetensors moe.safetensors; do
    RIG_LOAD_TRACE=1 "$B/tools/rig" load /tmp/layouts/$f --device cuda:0 2>&1 | grep -v "^\s*$" | tail -14
  done
  echo "=== python rows"
  ROUNDS=${ROUNDS:-1} timeout 200 python3 bench/load/python_rows.py "$B/tools/rig" /tmp/layouts/uniform.safetensors \
    /tmp/layouts/llama.safetensors /tmp/layouts/moe.safetensors /tmp/layouts/sharded.d/model.safetensors.index.json 2>&1
} 2>&1 | tee "${OUT:-/tmp}/issue32.txt"
