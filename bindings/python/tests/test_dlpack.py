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
