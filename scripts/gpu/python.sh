#!/usr/bin/env bash
# The Python binding's pytest suite on the H200 with RIG_REQUIRE=cuda: the timeout and interrupt cases run
# the rig_delay kernel of tests/cuda/kernels.ptx on the real GPU, and pinned memory is checked to be seen
# through memoryview without a copy; nothing may skip. Builds nothing: the carried build's package
# (BUILD/bindings/python) is imported. Usage (repository root): scripts/gpu/python.sh BUILD_DIR
B=${1:-build-gpu}
export RIG_REQUIRE=cuda RIG_TEST_CUDA_PTX=$PWD/tests/cuda/kernels.ptx PYTHONPATH=$PWD/$B/bindings/python RIG_TOOL=$PWD/$B/tools/rig
unset RIG_CUDA_LIBRARY
python3 -c 'import rig; print("rig", rig.__version__, rig.__file__, rig.device_list())'
timeout 300 python3 -m pytest -q -rs -p no:cacheprovider bindings/python/tests 2>&1 | tee "${OUT:-/tmp}/python-pytest.log" | tail -30
