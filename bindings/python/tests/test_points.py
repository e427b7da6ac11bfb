# Points typed (issue 33, item 6): every call that returns a point returns a rig.Point, which a device's
# own wait (a timeline value) refuses with a TypeError, while wait_point and waits take it (or its int).
import ast
import ctypes
import os

import pytest

import rig


def _fill(device, buf, byte):
    return rig.submit(device, [rig.fill(0, byte)], [(buf, rig.WRITE)])


def test_a_submits_point_is_a_point_decoded_as_rig_h_packs_it(device):
    buf = rig.Buffer.create(device, 4)
    first, second = _fill(device, buf, 1), _fill(device, buf, 2)
    assert type(first) is rig.Point and type(second) is rig.Point
    index = device.info()["index"]
    assert (first.device_index, first.value) == (index, 1)
    assert (second.device_index, second.value) == (index, 2)
    assert int(second) == (index << 47) | 2  # still the C ABI's 64-bit word
    assert second == device.point(2) and type(device.point(2)) is rig.Point
    assert repr(second) == "Point(memory:test, 2)" and str(second) == repr(second)


def test_every_call_returning_a_point_returns_a_point(device):
    buf = rig.Buffer.create(device, 4)
    assert type(buf.last_write()) is rig.Point and buf.last_write() == 0  # nothing written yet
    assert repr(buf.last_write()) == "Point(none)"
    with rig.Submission(device, [rig.fill(0, 7)], [rig.WRITE]) as sub, sub.take() as run:
        run.set_buffer(0, buf)
        p = run.submit()
        q = run.submit([p])
    assert type(p) is rig.Point and type(q) is rig.Point
    assert buf.last_write() == q and type(buf.last_write()) is rig.Point


def test_a_last_write_on_another_device_names_that_device():
    with rig.memory_device("A") as a, rig.memory_device("B") as b:
        x = rig.Buffer.create(a, 4)
        written = rig.submit(b, [rig.fill(0, 3)], [(x.borrow(b), rig.WRITE)])
        assert x.last_write() == written
        assert repr(x.last_write()) == "Point(memory:B, 1)"
        assert x.last_write().device_index == b.info()["index"] != a.info()["index"]


def test_a_devices_wait_refuses_a_point_with_the_way_to_wait_for_it(device):
    buf = rig.Buffer.create(device, 4)
    p = _fill(device, buf, 9)
    with pytest.raises(TypeError, match=r"a point: use rig.wait_point\(p\) or device.wait\(p.value\)"):
        device.wait(p)
    with pytest.raises(TypeError, match="point"):
        device.point(p)
    # the two waits it names both work
    device.wait(p.value, timeout=1.0)
    rig.wait_point(p, timeout=1.0)
    assert device.signaled() == 1


def test_wait_point_and_waits_take_points_and_their_ints(device):
    buf = rig.Buffer.create(device, 4)
    p = _fill(device, buf, 5)
    rig.wait_point(p, timeout=1.0)
    rig.wait_point(int(p), timeout=1.0)  # an int, as before Point existed
    rig.wait_point(rig.Point(0), timeout=0)  # no point: reached at once
    q = rig.submit(device, [rig.fill(0, 6)], [(buf, rig.WRITE)], waits=[p, int(p)])
    assert q.value == 2 and buf.to_bytes() == b"\x06" * 4
    with pytest.raises(TypeError):
        rig.wait_point(1.5)  # neither a Point nor an int


def test_a_point_of_no_open_device_is_not_found_not_a_wrong_wait():
    unopened = rig.Point((65535 << 47) | 1)
    assert (unopened.device_index, unopened.value) == (65535, 1)
    assert repr(unopened) == "Point(device#65535, 1)"
    with pytest.raises(rig.NotFound):
        rig.wait_point(unopened, timeout=0)


def test_the_stubs_type_points_apart_from_timeline_values():
    with open(os.path.join(os.path.dirname(rig.__file__), "__init__.pyi")) as f:
        tree = ast.parse(f.read())
    top = {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    point = top["Point"]
    assert isinstance(point, ast.ClassDef) and [ast.unparse(b) for b in point.bases] == ["int"]
    assert {f.name for f in point.body if isinstance(f, ast.FunctionDef)} >= {"device_index", "value"}

    def method(cls, name):
        return next(f for f in top[cls].body if isinstance(f, ast.FunctionDef) and f.name == name)

    assert ast.unparse(top["submit"].returns) == "Point"
    assert ast.unparse(method("Run", "submit").returns) == "Point"
    assert ast.unparse(method("Device", "point").returns) == "Point"
    assert ast.unparse(method("Buffer", "last_write").returns) == "Point"
    assert ast.unparse(method("Buffer", "stamp_stream").returns) == "Point"
    assert ast.unparse(method("Device", "wait").args.args[1].annotation) == "int"
    assert ast.unparse(top["wait_point"].args.args[0].annotation) == "_PointLike"


@pytest.fixture
def native_stream(cuda_device):
    """A CUDA stream of cuda:0 made through the driver rig runs on (the fake libcuda under meson)."""
    cuda = ctypes.CDLL(os.environ.get("RIG_CUDA_LIBRARY") or "libcuda.so.1")
    ctx, stream = ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuInit(0) == 0 and cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert cuda.cuCtxSetCurrent(ctx) == 0 and cuda.cuStreamCreate(ctypes.byref(stream), 0) == 0
    yield stream.value
    cuda.cuStreamDestroy_v2(stream)


def test_a_streams_point_is_a_point_of_its_gpu(cuda_device, native_stream):
    buf = rig.Buffer.create(cuda_device, 16)
    p = buf.stamp_stream(native_stream)
    assert type(p) is rig.Point and p.device_index == cuda_device.info()["index"]
    assert repr(p) == "Point(%s, %d)" % (cuda_device.name, p.value)
    assert buf.last_write() == p  # READ_WRITE: recorded as the last write
    rig.wait_point(p, timeout=10.0)
    with pytest.raises(TypeError, match="a point: use rig.wait_point"):
        cuda_device.wait(p)
