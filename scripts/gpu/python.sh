#!/usr/bin/env bash
# The Python binding's pytest suite on the H200 with RIG_REQUIRE=cuda: the timeout and interrupt cases run
# the rig_delay kernel of tests/cuda/kernels.ptx on the real GPU, and pinned memory is checked to be seen
# through memoryview without a copy; nothing may skip. The package is this tree's modules with the carried
# build's wrapper compiled for the machine's own python3 (pyrig.sh: the build's extension is Debian's
# python's). Usage (repository root): scripts/gpu/python.sh BUILD_DIR
B=$(cd "${1:-build-gpu}" && pwd)
. scripts/gpu/pyrig.sh
export RIG_REQUIRE=cuda RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx RIG_TOOL=$B/tools/rig
unset RIG_CUDA_LIBRARY
python3 -c 'import rig; print("rig", rig.__version__, rig.__file__, rig.device_list())'
timeout 300 python3 -m pytest -q -rs -p no:cacheprovider bindings/python/tests 2>&1 | tee "${OUT:-/tmp}/python-pytest.log" | tail -30
