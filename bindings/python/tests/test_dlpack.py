# DLPack and the CUDA array interface on rig buffers (rig._dlpack): numpy sees a memory device's bytes
# without a copy and after rig's last write; the stream protocol's bad values are refused; a CUDA buffer on
# the fake libcuda states its device, address and CUDA array interface.
import pytest

import rig


def test_numpy_from_dlpack_sees_the_bytes_without_a_copy_after_rigs_write(device, numpy):
    src = rig.Buffer.create(device, 16)
    src.write_from(0, bytes(range(16)))
    dst = rig.Buffer.create(device, 16)
    rig.submit(device, [rig.copy(0, 1)], [(src, rig.READ), (dst, rig.WRITE)])  # rig's last write of dst
    assert dst.__dlpack_device__() == (1, 0)
    a = numpy.from_dlpack(dst)
    assert a.dtype == numpy.uint8 and a.shape == (16,)
    assert a.tolist() == list(range(16))
    dst.write_from(0, b"\x63")  # the same memory: numpy sees rig's later write (numpy 1.x imports read-only)
    assert a[0] == 99


def test_as_array_types_the_elements(device, numpy):
    buf = rig.Buffer.create(device, 16)
    buf.write_from(0, numpy.arange(4, dtype=numpy.float32).tobytes())
    a = numpy.from_dlpack(buf.as_array("float32"))
    assert a.dtype == numpy.float32 and a.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError):
        buf.as_array("complex256")
    with pytest.raises(rig.InvalidArgument):  # 6 bytes are no whole number of float32s
        buf.view(0, 6).as_array("float32").__dlpack__()


def test_the_tensor_keeps_the_allocation_after_the_buffer_closes(device, numpy):
    buf = rig.Buffer.create(device, 8)
    buf.write_from(0, b"ABCDEFGH")
    a = numpy.from_dlpack(buf)
    buf.close()
    assert bytes(a.tobytes()) == b"ABCDEFGH"


def test_an_unconsumed_capsule_is_freed_and_a_host_buffer_takes_no_stream(device):
    buf = rig.Buffer.create(device, 8)
    capsule = buf.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"
    del capsule  # never consumed: its destructor deletes the tensor
    with pytest.raises(BufferError):
        buf.__dlpack__(stream=5)
    assert not hasattr(buf, "__cuda_array_interface__")  # host memory: not CUDA's


def test_cuda_buffer_states_its_device_address_and_array_interface(cuda_device):
    gpu = cuda_device
    buf = rig.Buffer.create(gpu, 64)
    buf.write_from(0, bytes(64))
    assert buf.__dlpack_device__() == (2, 0)
    cai = buf.as_array("float32").__cuda_array_interface__
    assert cai["shape"] == (16,) and cai["typestr"] == "<f4" and cai["version"] == 3
    assert cai["data"] == (buf.device_address, False) and cai["stream"] is None
    with pytest.raises(BufferError):  # 0 is ambiguous for CUDA in the stream protocol
        buf.__dlpack__(stream=0)
    assert type(buf.__dlpack__(stream=-1)).__name__ == "PyCapsule"
    assert type(buf.__dlpack__()).__name__ == "PyCapsule"  # the legacy default stream waits for the write
    buf.close()


def test_the_array_api_keywords_are_taken(device, numpy):
    # numpy 2 and torch pass max_version first and retry without it on a TypeError: rig takes it (and
    # answers the unversioned capsule, as the protocol allows), and refuses a copy or another device.
    buf = rig.Buffer.create(device, 8)
    assert type(buf.__dlpack__(max_version=(1, 0))).__name__ == "PyCapsule"
    assert type(buf.__dlpack__(dl_device=(1, 0), copy=False)).__name__ == "PyCapsule"
    with pytest.raises(BufferError, match="copy=True"):
        buf.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="dl_device"):
        buf.__dlpack__(dl_device=(2, 0))


class _Capsule:
    """A capsule handed to numpy.from_dlpack, which takes only objects with __dlpack__."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **_):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def test_a_shaped_capsule_carries_the_tensors_type_and_shape(device, numpy):
    # What rig.load_file hands torch: the tensor's own type and shape in the capsule, no view or reshape.
    from rig import _rig

    want = numpy.arange(24, dtype=numpy.float32).reshape(2, 3, 4)
    buf = rig.Buffer.create(device, want.nbytes)
    buf.write_from(0, want.tobytes())
    buf.export()  # the host waits for every use, as rig._typed's path does
    a = numpy.from_dlpack(_Capsule(_rig.rig_py_dlpack_capsule_shaped(buf._raw, 2, 32, (2, 3, 4))))
    assert a.dtype == numpy.float32 and a.shape == (2, 3, 4) and (a == want).all()
    first = buf.view(0, 4)
    scalar = numpy.from_dlpack(_Capsule(_rig.rig_py_dlpack_capsule_shaped(first._raw, 2, 32, ())))
    assert scalar.shape == () and scalar == 0.0
    for bad, message in (((5, 5), "25 elements"), ((2, -3, 4), "negative"), ((1 << 40, 1 << 40), "64 bits")):
        with pytest.raises(ValueError, match=message):
            _rig.rig_py_dlpack_capsule_shaped(buf._raw, 2, 32, bad)
    with pytest.raises(TypeError):
        _rig.rig_py_dlpack_capsule_shaped(buf._raw, 2, 32, 7)


def test_every_type_rig_types_in_the_capsule_is_one_rig_hands_out(device):
    # rig._typed sends these types through the shaped capsule; rig_buffer_to_dlpack must take each code.
    from rig import _rig, _typed

    buf = rig.Buffer.create(device, 16)
    for rig_dtype, (code, bits) in _typed.DLPACK_TYPES.items():
        capsule = _rig.rig_py_dlpack_capsule_shaped(buf._raw, code, bits, (16 * 8 // bits,))
        assert type(capsule).__name__ == "PyCapsule", rig_dtype
