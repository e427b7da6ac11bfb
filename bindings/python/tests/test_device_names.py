# What a user meets first: the device names rig.device_list() gives (as `rig devices` lists them), and
# the device a wrapped buffer reports.
import os

import rig


def test_device_list_starts_with_memory_devices_and_each_name_opens():
    names = rig.device_list()
    assert names[0] == "memory:NAME", names
    assert len(set(names)) == len(names)
    with rig.open_device(names[0]) as d:
        assert d.kind == rig.DeviceKind.MEMORY and d.name == "NAME"
    for name in names[1:]:
        assert ":" in name and not name.startswith("memory:"), name
    if os.environ.get("RIG_CUDA_LIBRARY"):  # the fake libcuda (meson test, CI): its devices are listed
        assert "cuda:0" in names, names


def test_a_wrapped_buffers_host_device_is_open_and_not_released_by_python():
    buf = rig.Buffer.wrap(bytearray(b"first hour"))
    dev = buf.device
    assert not dev.closed
    assert "closed" not in repr(dev), repr(dev)
    assert dev.kind == rig.DeviceKind.HOST
    dev.close()  # a buffer's device: only this object reads as closed, nothing is released
    assert dev.closed and repr(dev) == "<rig.Device closed>"
    again = buf.device
    assert not again.closed and again.kind == rig.DeviceKind.HOST
    del dev, again
    assert buf.to_bytes() == b"first hour"
    buf.close()
