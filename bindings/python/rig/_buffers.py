"""Buffers (bytes of one allocation seen by one device) and modules (device code)."""

from . import _dlpack, _rig
from ._devices import _borrowed_device
from ._enums import Memory, ModuleFormat
from ._owned import Owned
from ._point import point_of

WHOLE = _rig.RIG_WHOLE_LENGTH  # "to the end of the buffer" for a part's length


class Buffer(Owned, _rig.BufferBase):
    """Bytes of one allocation, seen by one device.

    Make one with Buffer.create(device, length) or Buffer.wrap(obj); views and borrows share the
    allocation (and its ordering) without a copy. Host reads and writes (read, write, read_into,
    write_from, to_bytes) wait as rules 5 and 6 say.

    Host-addressable buffers (memory devices, the host, pinned or mapped memory) support the buffer
    protocol: ``memoryview(buf)`` and ``numpy.asarray(buf)`` see the bytes without a copy, ordered as of
    the moment the view is made (it waits for every use then; later host accesses through the view follow
    nothing). A buffer refuses close() while such views are alive (BufferError). GPU device memory raises
    BufferError: use read_into or to_bytes there.
    """

    _release_fn = staticmethod(_rig.rig_buffer_release)

    def __init__(self, raw, readonly=False, device=None):
        # Keeps the Device object it was made on: a device released (collected) while buffers on it live
        # would leave them answering DeviceLost ("was released"), which no Python program expects.
        Owned.__init__(self, raw, keep=device)
        self._readonly = readonly  # wraps read-only bytes: views of it are read-only too

    @classmethod
    def create(cls, device, length, memory=Memory.DEVICE):
        """A new allocation of ``length`` bytes on ``device`` (contents unspecified)."""
        return cls(_rig.rig_buffer_create(device._raw, length, int(memory)), device=device)

    @classmethod
    def wrap(cls, obj):
        """A host buffer over obj's bytes without a copy (bytes: read-only; bytearray, numpy, mmap:
        read-write). obj is held until rig no longer uses the bytes."""
        raw = _rig.rig_py_wrap(obj)
        try:
            with memoryview(obj) as m:
                readonly = m.readonly
        except TypeError:
            readonly = True
        return cls(raw, readonly)

    def close(self):
        """Releases the handle; BufferError while memoryviews of this buffer are alive."""
        if not self._released and self._exports:
            raise BufferError("rig.Buffer has %d live view(s): release them before closing" % self._exports)
        Owned.close(self)

    release = close

    def view(self, offset, length):
        """A buffer over bytes [offset, offset+length): same device, allocation and ordering."""
        return Buffer(_rig.rig_buffer_view(self._raw, offset, length), self._readonly, self._keep)

    def borrow(self, device):
        """A buffer on ``device`` over these bytes without a copy (Unmappable where it cannot map them)."""
        return Buffer(_rig.rig_buffer_borrow(device._raw, self._raw), self._readonly, device)

    def __len__(self):
        return _rig.rig_buffer_length(self._raw)

    @property
    def device(self):
        """The device this buffer is seen by: the Device it was made on where Python made it."""
        if self._keep is not None and not self._released:
            return self._keep
        return _borrowed_device(_rig.rig_buffer_device(self._raw))

    def last_write(self):
        """The Point of the last write recorded on this buffer's allocation (Point(none): none yet), on
        whichever device wrote it; waits for nothing."""
        return point_of(_rig.rig_py_last_write(self._raw))

    def read(self, fn):
        """fn(memoryview) after the last write (rule 5); the view is valid only during fn."""
        _rig.rig_py_buffer_read(self._raw, fn)

    def write(self, fn):
        """fn(writable memoryview) after every use (rule 6); the view is valid only during fn."""
        _rig.rig_py_buffer_write(self._raw, fn)

    def read_into(self, offset, dst):
        """Copies len(dst) bytes from ``offset`` into dst (any writable buffer) after the last write."""
        _rig.rig_buffer_read_into(self._raw, offset, dst)

    def write_from(self, offset, src):
        """Copies src's bytes (any buffer) into the buffer at ``offset`` after every use."""
        _rig.rig_buffer_write_from(self._raw, offset, src)

    def to_bytes(self):
        """A copy of the bytes, after the last write."""
        out = bytearray(len(self))
        self.read_into(0, out)
        return bytes(out)

    def export(self):
        """A memoryview of the bytes, ordered only as of this call (rig_buffer_export)."""
        return memoryview(self)

    # ---- interop: DLPack, the CUDA array interface, native streams (rig._dlpack says how they order) ----

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the bytes as uint8, after rig's last write on the consumer's ``stream``
        (the Array API's keywords as rig._dlpack.dlpack takes them)."""
        return _dlpack.dlpack(self, "uint8", stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """(device type, device id) as DLPack numbers them: (1, 0) host, (2, n) CUDA, (10, n) ROCm."""
        return tuple(_rig.rig_py_dlpack_device(self._raw))

    @property
    def __cuda_array_interface__(self):
        """The CUDA array interface (v3) of the bytes as uint8; AttributeError where not CUDA memory."""
        return _dlpack.cuda_array_interface(self, "uint8")

    def as_array(self, dtype):
        """The bytes as a 1-D array of ``dtype`` ("float32", "int64", ...) for from_dlpack and the CUDA
        array interface, without a copy."""
        return _dlpack.ArrayView(self, dtype)

    def stamp_stream(self, stream, access=None):
        """Makes rig's later work on these bytes follow the work enqueued so far on the native ``stream``
        (an int: a CUstream or hipStream_t, as torch.cuda.current_stream().cuda_stream gives it)."""
        return _dlpack.stamp_stream(self, stream) if access is None else _dlpack.stamp_stream(self, stream, access)

    @property
    def device_address(self):
        """The address of the first byte as the device's work sees it (ordered by nothing)."""
        return _rig.rig_py_device_address(self._raw)

    def __repr__(self):
        if self._released:
            return "<rig.Buffer closed>"
        try:
            return "<rig.Buffer %d bytes on %r%s>" % (len(self), self.device.name,
                                                     " read-only" if self._readonly else "")
        except Exception as e:  # noqa: BLE001 - a repr never raises
            return "<rig.Buffer (%s)>" % e


class Module(Owned):
    """Device code loaded on one device (PTX, cubin, SPIR-V, a HIP code object)."""

    _release_fn = staticmethod(_rig.rig_module_release)

    @classmethod
    def load(cls, device, fmt, code):
        """Loads ``code`` (bytes) of format ``fmt`` (a ModuleFormat) on ``device``."""
        return cls(_rig.rig_module_load(device._raw, int(ModuleFormat(fmt)), code), keep=device)

    def __repr__(self):
        return "<rig.Module%s>" % (" closed" if self._released else "")
