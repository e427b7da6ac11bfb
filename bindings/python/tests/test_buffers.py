# Bytes without copies: the buffer protocol on host-addressable buffers, wraps of Python memory, numpy.
import pytest

import rig


def test_read_and_write_callbacks_see_the_bytes(device):
    buf = rig.Buffer.create(device, 8)

    def fill(view):
        view[:] = b"ABCDEFGH"

    buf.write(fill)
    seen = []
    buf.read(lambda view: seen.append(bytes(view)))
    assert seen == [b"ABCDEFGH"]
    kept = []
    buf.read(kept.append)
    with pytest.raises(ValueError):
        kept[0][0]  # a view kept after its callback is released


def test_memoryview_of_a_buffer_is_its_memory(device):
    buf = rig.Buffer.create(device, 8)
    buf.write_from(0, b"12345678")
    with memoryview(buf) as m:
        assert not m.readonly and m.nbytes == 8
        assert bytes(m) == b"12345678"
        m[0:2] = b"ab"  # a write through the view lands in the buffer itself
    assert buf.to_bytes() == b"ab345678"
    assert bytes(buf) == b"ab345678"


def test_view_of_a_view_shows_its_range(device):
    buf = rig.Buffer.create(device, 8)
    buf.write_from(0, b"abcdefgh")
    part = buf.view(2, 4)
    with memoryview(part) as m:
        assert bytes(m) == b"cdef"
        m[0] = ord("C")
    assert buf.to_bytes() == b"abCdefgh"


def test_wrapped_bytearray_is_not_copied():
    backing = bytearray(4)
    wrapped = rig.Buffer.wrap(backing)
    wrapped.write_from(0, b"wxyz")
    assert backing == b"wxyz"
    with memoryview(wrapped) as m:
        m[0] = ord("W")
    assert backing == b"Wxyz"


def test_wrapped_bytes_give_read_only_views():
    buf = rig.Buffer.wrap(b"abcd")
    with memoryview(buf) as m:
        assert m.readonly and bytes(m) == b"abcd"
    assert memoryview(buf.view(1, 2)).readonly


def test_close_is_refused_while_a_view_lives(device):
    buf = rig.Buffer.create(device, 4)
    m = memoryview(buf)
    with pytest.raises(BufferError):
        buf.close()
    assert not buf.closed
    m.release()
    buf.close()
    with pytest.raises(BufferError):
        memoryview(buf)  # a closed buffer's bytes are gone


def test_context_managers_release(device):
    with rig.Buffer.create(device, 4) as buf:
        assert len(buf) == 4
    assert buf.closed
    with pytest.raises(rig.InvalidHandle):
        len(buf)


def test_numpy_array_is_wrapped_without_a_copy(numpy):
    arr = numpy.zeros(4, dtype=numpy.uint8)
    nb = rig.Buffer.wrap(arr)
    nb.write_from(0, b"\x01\x02\x03\x04")
    assert list(arr) == [1, 2, 3, 4]
    view = numpy.asarray(memoryview(nb))
    assert numpy.shares_memory(view, arr)


def test_numpy_sees_a_rig_buffer_without_a_copy(device, numpy):
    buf = rig.Buffer.create(device, 16)
    buf.write_from(0, bytes(range(16)))
    arr = numpy.frombuffer(buf, dtype=numpy.uint8)
    assert list(arr) == list(range(16))
    again = numpy.frombuffer(buf, dtype=numpy.uint8)
    assert numpy.shares_memory(arr, again)  # both are the buffer's own bytes
    writable = numpy.asarray(memoryview(buf)).view(numpy.uint32)
    writable[0] = 0xFFFFFFFF
    assert buf.to_bytes()[:4] == b"\xff\xff\xff\xff"


def test_pinned_memory_of_a_gpu_is_seen_without_a_copy(cuda_device):
    # Pinned memory is host-addressable: the view is the memory the GPU's copies land in.
    pinned = rig.Buffer.create(cuda_device, 8, rig.Memory.PINNED)
    dev = rig.Buffer.create(cuda_device, 8)
    with memoryview(pinned) as m:
        m[:] = b"pinned!!"
    rig.submit(cuda_device, [rig.copy(0, 1)], [(pinned, rig.READ), (dev, rig.WRITE)])
    assert dev.to_bytes() == b"pinned!!"
    rig.submit(cuda_device, [rig.fill(0, 0x2A)], [(dev, rig.WRITE)])
    rig.submit(cuda_device, [rig.copy(0, 1)], [(dev, rig.READ), (pinned, rig.WRITE)])
    with memoryview(pinned) as m:  # made after the copy: it waits for it
        assert bytes(m) == b"*" * 8


def test_gpu_device_memory_refuses_a_view_with_rigs_words(cuda_device):
    dev = rig.Buffer.create(cuda_device, 8)
    with pytest.raises(BufferError) as info:
        memoryview(dev)
    assert "RIG_UNSUPPORTED" in str(info.value)
    assert dev.to_bytes() is not None  # the buffer still reads through rig


@pytest.mark.parametrize("name,library", [("cuda:0", "RIG_CUDA_LIBRARY"), ("hip:0", "RIG_HIP_LIBRARY")])
def test_numpy_memory_of_any_alignment_borrows_onto_cuda_and_hip(numpy, name, library):
    # numpy's bytes start on no page boundary here: rig registers the enclosing pages and the device copies
    # the array's bytes in place (meson runs this over the fake libcuda and the fake HIP runtime).
    import os

    try:
        device = rig.open_device(name)
    except rig.RigError as e:
        if name.split(":")[0] in os.environ.get("RIG_REQUIRE", "").split(","):
            pytest.fail(str(e))
        pytest.skip("no %s device (nor a double through %s): %s" % (name, library, e))
    with device:
        arr = numpy.arange(5000, dtype=numpy.uint8)
        part = arr[3:4003]
        with rig.Buffer.wrap(part) as src, src.borrow(device) as on_d, rig.Buffer.create(device, len(part)) as x:
            rig.submit(device, [rig.copy(0, 1)], [(on_d, rig.READ), (x, rig.WRITE)])
            out = bytearray(len(part))
            x.read_into(0, out)
            assert bytes(out) == part.tobytes()
        device.wait(device.submitted())


def test_buffers_modules_and_runs_keep_their_device_alive():
    # A device object collected while work on it lives would release the device under it (rig answers
    # DeviceLost: "was released"); Python objects made on a device keep it, as a tensor keeps its storage.
    import gc

    buf = rig.Buffer.create(rig.memory_device("kept"), 16)
    part = buf.view(4, 8)
    gc.collect()
    buf.write_from(0, b"0123456789abcdef")
    assert part.to_bytes() == b"456789ab"
    assert buf.device.name == "kept" and part.device is buf.device
    other = rig.memory_device("other")
    borrowed = rig.Buffer.create(other, 16).borrow(rig.memory_device("borrower"))
    del other
    gc.collect()
    assert borrowed.device.name == "borrower" and len(borrowed.to_bytes()) == 16
    import weakref

    dev = rig.memory_device("runs")
    seen = weakref.ref(dev)
    sub = rig.Submission(dev, [rig.fill(0, 7)], [rig.Access.WRITE])
    run = sub.take()
    del dev
    gc.collect()
    assert seen() is not None  # the submission keeps it
    dst = rig.Buffer.create(seen(), 8)
    run.set_buffer(0, dst)
    rig.wait_point(run.submit())
    assert dst.to_bytes() == bytes([7]) * 8
