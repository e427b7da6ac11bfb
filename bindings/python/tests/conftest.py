# pytest's setup for rig's Python tests: the package under test is whichever `rig` Python imports (an
# installed wheel, a Debian package, or the build tree on PYTHONPATH as meson's binding-python test sets
# it). The header line says which one ran, so a run against the wrong copy shows.
import os
import struct
import sys

import pytest

try:
    import rig
except ImportError as e:  # pragma: no cover - a setup error, reported as such
    # Not installed: the package meson built in build/ (meson setup build && ninja -C build), if there.
    _built = os.path.join(os.path.dirname(__file__), "..", "..", "..", "build", "bindings", "python")
    if not os.path.isfile(os.path.join(_built, "rig", "__init__.py")):
        raise pytest.UsageError(
            "cannot import rig (%s): install the wheel (pip install . --no-build-isolation) or build with "
            "meson (meson setup build && ninja -C build), whose build/bindings/python this falls back to" % e)
    sys.path.insert(0, os.path.abspath(_built))
    import rig


def pytest_report_header(config):
    return "rig %s from %s" % (rig.__version__, os.path.dirname(rig.__file__))


@pytest.fixture
def device():
    """A fresh memory device (host memory, work inline), closed after the test."""
    with rig.memory_device("test") as d:
        yield d


@pytest.fixture(scope="session")
def numpy():
    """numpy where installed; the test is skipped, with the reason shown, where not."""
    return pytest.importorskip("numpy", reason="python3-numpy not installed: numpy interop not tested")


def _unavailable(reason):
    """Skips the test with the reason, or fails it where RIG_REQUIRE names cuda."""
    if "cuda" in os.environ.get("RIG_REQUIRE", "").split(","):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def cuda_device():
    """cuda:0: the fake libcuda (RIG_CUDA_LIBRARY, as meson and CI set it) or a real GPU. Skipped, with
    the reason, where there is none; fails instead where RIG_REQUIRE names cuda."""
    try:
        device = rig.open_device("cuda:0")
    except rig.RigError as e:
        _unavailable("no CUDA device (nor the fake libcuda through RIG_CUDA_LIBRARY): %s" % e)
    yield device
    try:
        device.wait(device.submitted())
    except rig.DeviceLost:  # a test that lost it on purpose
        pass
    device.close()


@pytest.fixture
def gpu_delay(cuda_device):
    """(device, delay): a CUDA device and delay(seconds) submitting a kernel that stays busy that long,
    returning its point. RIG_TEST_CUDA_PTX names tests/cuda/kernels.ptx (its rig_delay kernel)."""
    device = cuda_device
    ptx = os.environ.get("RIG_TEST_CUDA_PTX", "")
    if not os.path.isfile(ptx):
        _unavailable("RIG_TEST_CUDA_PTX does not name tests/cuda/kernels.ptx: no kernel to keep a device busy")
    with open(ptx, "rb") as f:
        module = rig.Module.load(device, rig.ModuleFormat.PTX, f.read())

    def delay(seconds):
        with rig.Submission(device, [rig.launch(module, "rig_delay", (1,), (1,), [])], []) as sub:
            with sub.take() as run:
                run.set_scalars(struct.pack("<Q", int(seconds * 1e9)))
                return run.submit()

    yield device, delay
    device.wait(device.submitted())
    module.close()
