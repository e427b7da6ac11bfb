"""DLPack and the CUDA array interface for rig buffers (rig_interop.h underneath).

``torch.from_dlpack(buf)``, ``cupy.from_dlpack(buf)`` and ``numpy.from_dlpack(buf)`` see the buffer's bytes
without a copy. The stream protocol orders them after rig's last write of the allocation: the consumer
passes its stream to ``__dlpack__(stream=...)`` and rig makes that stream wait for the last write in its
queue (rig_stream_wait_point; the host never blocks). A host buffer (memory devices, the host) waits on
the host instead, for every use (rule 6, as ``memoryview(buf)`` does). ``__cuda_array_interface__`` has no
consumer stream to order, so it waits on the host for the last write and says ``stream: None``.

rig does not see what the consumer then does with the bytes: before rig's own later work on the buffer,
call ``buf.stamp_stream(stream)`` so that it follows the consumer's work on its stream.
"""

from . import _rig
from ._enums import Access
from ._errors import Unsupported
from ._point import point_of

DLPACK_CPU, DLPACK_CUDA, DLPACK_ROCM = 1, 2, 10

# dtype name -> (DLPack type code, bits, __cuda_array_interface__ typestr or None)
DTYPES = {
    "uint8": (1, 8, "|u1"), "int8": (0, 8, "|i1"),
    "uint16": (1, 16, "<u2"), "int16": (0, 16, "<i2"),
    "uint32": (1, 32, "<u4"), "int32": (0, 32, "<i4"),
    "uint64": (1, 64, "<u8"), "int64": (0, 64, "<i8"),
    "float16": (2, 16, "<f2"), "float32": (2, 32, "<f4"), "float64": (2, 64, "<f8"),
    "bfloat16": (4, 16, None),
}

_FOREVER = (1 << 64) - 1


def _dtype(dtype):
    try:
        return DTYPES[str(dtype)]
    except KeyError:
        raise ValueError("unknown dtype %r: one of %s" % (dtype, ", ".join(sorted(DTYPES)))) from None


def _native_stream(device_type, stream):
    """The consumer's stream as a native handle (DLPack's numbering), or None for no synchronization."""
    if stream == -1:
        return None
    if device_type == DLPACK_CUDA:
        if stream == 0:
            raise BufferError("stream=0 is ambiguous for CUDA (DLPack): pass 1 (legacy default), 2 (per-thread) "
                              "or a stream")
        return 0 if stream in (None, 1) else int(stream)  # 2: CU_STREAM_PER_THREAD, a handle in itself
    return 0 if stream in (None, 0) else int(stream)  # ROCm: the null stream is the default


def dlpack(buf, dtype="uint8", stream=None, max_version=None, dl_device=None, copy=None):
    """A "dltensor" capsule over buf's bytes as a 1-D tensor of ``dtype``, ordered as the module says.
    ``max_version``, ``dl_device`` and ``copy`` are the Array API's: rig answers the unversioned capsule
    every consumer reads (the protocol allows it), on the buffer's own device and without a copy
    (BufferError where ``dl_device`` names another device or ``copy`` is True)."""
    code, bits, _ = _dtype(dtype)
    device_type, device_id = _rig.rig_py_dlpack_device(buf._raw)
    if dl_device is not None and tuple(dl_device) != (device_type, device_id):
        raise BufferError("dl_device=%r: the buffer is on %r and rig does not copy across devices"
                          % (tuple(dl_device), (device_type, device_id)))
    if copy:
        raise BufferError("copy=True: rig hands out its own memory, never a copy")
    order(buf, device_type, None if device_type == DLPACK_CPU else _native_stream(device_type, stream), stream)
    return _rig.rig_py_dlpack_capsule(buf._raw, code, bits, 1)


def order(buf, device_type, native, stream=None):
    """Orders a consumer's reads of buf after rig's last write: the native stream ``native`` (a handle, or
    None for none) waits in its queue; a host buffer waits here for every use (``stream`` must be None)."""
    if device_type == DLPACK_CPU:
        if stream is not None:
            raise BufferError("a host buffer takes no stream (DLPack: stream=None for kDLCPU)")
        _rig.rig_buffer_export(buf._raw)  # waits for every use: host code may now read and write
    elif native is not None:
        last = _rig.rig_py_last_write(buf._raw)
        try:
            _rig.rig_py_stream_wait_point(buf.device._raw, native, last)
        except Unsupported:  # a writer whose queue no native stream can wait on (Vulkan): the host waits
            _rig.rig_wait_point(last, _FOREVER)


def cuda_array_interface(buf, dtype="uint8"):
    """Version 3 of the CUDA array interface, after the last write (a host wait); CUDA buffers only."""
    _, bits, typestr = _dtype(dtype)
    device_type, _ = _rig.rig_py_dlpack_device(buf._raw)
    if device_type != DLPACK_CUDA:
        raise AttributeError("__cuda_array_interface__: %r is not CUDA memory" % buf)
    if typestr is None:
        raise AttributeError("__cuda_array_interface__ has no typestr for %s" % dtype)
    size = bits // 8
    if len(buf) % size:
        raise AttributeError("__cuda_array_interface__: %d bytes are not whole %s elements" % (len(buf), dtype))
    _rig.rig_wait_point(_rig.rig_py_last_write(buf._raw), _FOREVER)
    return {"shape": (len(buf) // size,), "typestr": typestr, "strides": None,
            "data": (_rig.rig_py_device_address(buf._raw), bool(buf._readonly)), "version": 3, "stream": None}


def stamp_stream(buf, stream, access=Access.READ_WRITE):
    """Makes rig's later work on buf's allocation follow what is enqueued so far on ``stream`` (a native
    CUDA/HIP stream of buf's GPU, as an int): a point taken from the stream (rig_stream_point), recorded as
    a use, and as the last write where ``access`` writes. Returns the Point."""
    device = buf.device
    point = point_of(_rig.rig_py_stream_point(device._raw, 0 if stream in (None, 1) else int(stream)), device)
    _rig.rig_py_buffer_stamp(buf._raw, point, int(access))
    return point


class ArrayView:
    """buf seen as a 1-D array of ``dtype`` by DLPack and the CUDA array interface (Buffer.as_array)."""

    def __init__(self, buf, dtype):
        _dtype(dtype)
        self.buffer, self.dtype = buf, str(dtype)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return dlpack(self.buffer, self.dtype, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        return self.buffer.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        return cuda_array_interface(self.buffer, self.dtype)
