# Mapped registration from Python: the self-test over probe ops written in Python, the static table.
import mmap
import os

import pytest

import rig


class WrongBytes(object):
    """Probe ops of a double whose device returns one wrong byte per round trip."""

    def __init__(self):
        self.registered = []
        self.allocated = 0

    def register_host(self, view):
        self.registered.append(len(view))

    def unregister_host(self, view):
        self.registered.remove(len(view))

    def alloc_host(self, length):
        self.allocated += 1
        return bytearray(length)

    def free_host(self, obj):
        self.allocated -= 1

    def round_trip(self, host, into):
        into[:] = host
        into[0] ^= 0xFF

    def upload(self, host):
        pass


class Faithful(WrongBytes):
    def round_trip(self, host, into):
        into[:] = host


@pytest.fixture
def mapping():
    length = 256 * 1024
    data = os.urandom(length)
    m = mmap.mmap(-1, length)  # page-aligned, as a file mapping is
    m[:] = data
    yield m, data
    m.close()


def test_wrong_bytes_double_is_refused(mapping):
    m, data = mapping
    logs = []
    ops = WrongBytes()
    v = rig.probe_with(ops, m, data, log=logs.append)
    assert v.kind == rig.VerdictKind.REFUSED and v.refusal == rig.Refusal.WRONG_BYTES
    assert v.cacheable and logs
    assert ops.registered == [] and ops.allocated == 0  # the probe released what it took
    assert "Refused" in repr(v)


def test_faithful_ops_are_not_refused(mapping):
    m, data = mapping
    assert rig.probe_with(Faithful(), m, data).kind != rig.VerdictKind.REFUSED


def test_raising_op_is_inconclusive_and_logged(mapping):
    m, data = mapping

    class Raising(Faithful):
        def register_host(self, view):
            raise RuntimeError("driver said no")

    lines = []
    v = rig.probe_with(Raising(), m, data, log=lines.append)
    assert v.kind == rig.VerdictKind.INCONCLUSIVE
    assert any("driver said no" in line for line in lines)


def test_memory_error_in_an_op_is_raised(mapping):
    m, data = mapping

    class OOM(Faithful):
        def alloc_host(self, length):
            raise MemoryError()

    with pytest.raises(MemoryError):
        rig.probe_with(OOM(), m, data)


def test_map_and_reference_of_different_lengths_are_refused(mapping):
    m, data = mapping
    with pytest.raises(ValueError):
        rig.probe_with(WrongBytes(), m, data[:-1])


def test_static_table():
    sv = rig.static_verdict_for("Vulkan", rig.DeviceKind.GPU, lambda fact: 0)
    assert sv is not None and sv.refusal == rig.Refusal.KERNEL_HAZARD
    sv = rig.static_verdict_for("CUDA", rig.DeviceKind.GPU, lambda fact: 1 if fact == rig.Fact.INTEGRATED else 0)
    assert sv is not None and sv.refusal == rig.Refusal.INTEGRATED_GPU
