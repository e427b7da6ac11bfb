# rig_py.py: the Python objects of the rig module, appended to the SWIG-generated rig.py by python.i.
#
# The raw functions above (rig_memory_device, rig_buffer_create, ...) take and return bare handles and
# raise rig.Error; the classes here own those handles and release them when collected (or at release(),
# or at the end of a with block). A released object keeps its stale handle, so a later use reaches rig
# and gets rig's own RIG_INVALID_HANDLE error, message included.

WHOLE = RIG_WHOLE_LENGTH
READ = RIG_ACCESS_READ
WRITE = RIG_ACCESS_WRITE
READ_WRITE = RIG_ACCESS_READ_WRITE
FOREVER = (1 << 64) - 1


def _error_str(self):
    return "%s: %s" % (getattr(self, "name", "RIG_ERROR"), getattr(self, "message", ""))


Error = _rig.Error
Error.__str__ = _error_str


class _Owned(object):
    """A rig handle this object releases once: at release(), at the end of a with block, or when
    collected."""

    _release_fn = None

    def __init__(self, raw, keep=None):
        self._raw = raw
        self._keep = keep  # Python objects rig's callbacks reach through this handle
        self._released = raw is None

    def release(self):
        if not self._released:
            self._released = True
            type(self)._release_fn(self._raw)

    def __del__(self):
        if not getattr(self, "_released", True):
            self._released = True
            try:
                type(self)._release_fn(self._raw)
            except Exception:
                pass  # at interpreter exit rig may already be unloaded; nothing to report to

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False


class Device(_Owned):
    """A device: the host, a memory device, a GPU."""

    _release_fn = staticmethod(rig_device_release)

    def info(self):
        return rig_device_get_info(self._raw)

    @property
    def name(self):
        return self.info()["name"]

    def submitted(self):
        return rig_device_submitted(self._raw)

    def signaled(self):
        return rig_device_signaled(self._raw)

    def wait(self, value, timeout_ns=FOREVER):
        rig_device_wait(self._raw, value, timeout_ns)

    def point(self, value):
        return rig_device_point(self._raw, value)

    def lost_reason(self):
        return rig_device_lost_reason(self._raw)


def _borrowed_device(raw):
    d = Device(raw)
    d._released = True  # borrowed from a buffer: not ours to release
    return d


def host():
    return Device(rig_host())


def memory_device(name):
    return Device(rig_memory_device(name))


def device_open(name):
    return Device(rig_device_open(name))


def device_list():
    names = []
    while True:
        name = rig_swig_device_name(len(names))
        if name is None:
            return names
        names.append(name)


def wait_point(point, timeout_ns=FOREVER):
    rig_wait_point(point, timeout_ns)


def interrupt_waits(on):
    rig_interrupt_waits(1 if on else 0)


def version():
    return rig_version_string()


class Buffer(_Owned):
    """Bytes of one allocation, seen by one device."""

    _release_fn = staticmethod(rig_buffer_release)

    @classmethod
    def create(cls, device, length, memory=RIG_MEMORY_DEVICE):
        return cls(rig_buffer_create(device._raw, length, memory))

    @classmethod
    def wrap(cls, obj):
        """A host buffer over obj's bytes without a copy (bytes: read-only; bytearray, numpy, mmap:
        read-write). obj is held until rig no longer uses the bytes."""
        return cls(rig_py_wrap(obj))

    def view(self, offset, length):
        return Buffer(rig_buffer_view(self._raw, offset, length))

    def borrow(self, device):
        return Buffer(rig_buffer_borrow(device._raw, self._raw))

    def __len__(self):
        return rig_buffer_length(self._raw)

    @property
    def device(self):
        return _borrowed_device(rig_buffer_device(self._raw))

    def read(self, fn):
        """fn(memoryview) after the last write (rule 5); the view is valid only during fn."""
        rig_py_buffer_read(self._raw, fn)

    def write(self, fn):
        """fn(writable memoryview) after every use (rule 6); the view is valid only during fn."""
        rig_py_buffer_write(self._raw, fn)

    def read_into(self, offset, dst):
        rig_buffer_read_into(self._raw, offset, dst)

    def write_from(self, offset, src):
        rig_buffer_write_from(self._raw, offset, src)

    def to_bytes(self):
        out = bytearray(len(self))
        self.read_into(0, out)
        return bytes(out)

    def export(self):
        """A memoryview of the bytes, ordered only as of this call (see rig.h, rig_buffer_export)."""
        return rig_py_export_view(self._raw)


class Module(_Owned):
    _release_fn = staticmethod(rig_module_release)

    @classmethod
    def load(cls, device, fmt, code):
        return cls(rig_module_load(device._raw, fmt, code))


class copy(object):
    """A part copying length bytes from slot src at src_offset to slot dst at dst_offset."""

    def __init__(self, src, dst, length=WHOLE, src_offset=0, dst_offset=0):
        self.args = (src, src_offset, dst, dst_offset, length)

    def _add(self, parts, keep):
        return rig_swig_parts_copy(parts, *self.args)


class fill(object):
    def __init__(self, dst, byte, length=WHOLE, offset=0):
        self.args = (dst, offset, length, byte)

    def _add(self, parts, keep):
        return rig_swig_parts_fill(parts, *self.args)


class host_kernel(object):
    """A part running fn(slots) on a memory device: slots is a list of memoryviews, one per slot of the
    submission (writable where the slot writes), valid only during fn. An exception fn raises is raised
    by the submit that ran it."""

    def __init__(self, fn):
        self.fn = fn

    def _add(self, parts, keep):
        keep.append(rig_py_parts_host_kernel(parts, self.fn))
        return 0


class launch(object):
    def __init__(self, module, function, grid, block, slots, shared_bytes=0):
        self.module, self.function = module, function
        self.grid, self.block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
        self.slots, self.shared_bytes = list(slots), shared_bytes

    def _add(self, parts, keep):
        keep.append(self.module)
        if rig_swig_parts_launch(parts, self.module._raw, self.function, *(self.grid + self.block + (self.shared_bytes,))):
            return -1
        for s in self.slots:
            if rig_swig_parts_launch_slot(parts, s):
                return -1
        return 0


class Submission(_Owned):
    """Parts of some work for one device, over slots with the given access."""

    _release_fn = staticmethod(rig_submission_release)

    def __init__(self, device, parts, access):
        keep = []
        p = rig_swig_parts_new()
        if p is None:
            raise MemoryError()
        try:
            for a in access:
                if rig_swig_parts_slot(p, a):
                    raise MemoryError()
            for part in parts:
                if part._add(p, keep):
                    raise MemoryError()
            raw = rig_swig_submission_make(device._raw, p)
        finally:
            rig_swig_parts_free(p)
        _Owned.__init__(self, raw, keep)

    def take(self):
        return Run(rig_run_take(self._raw), self)

    def __del__(self):
        # The kernels' capsules (in _keep) go only with the last Python reference: a Run refers to its
        # Submission, so they outlive every run that may call them.
        _Owned.__del__(self)


class Run(_Owned):
    """A submission taken with a buffer table: set every slot, then submit (any number of times)."""

    _release_fn = staticmethod(rig_run_release)

    def __init__(self, raw, submission):
        _Owned.__init__(self, raw, submission)

    def set_buffer(self, slot, buffer):
        rig_run_set_buffer(self._raw, slot, buffer._raw)

    def set_scalars(self, data):
        rig_run_set_scalars(self._raw, data)

    def submit(self, waits=()):
        return rig_submit(self._raw, list(waits))


def submit(device, parts, slots):
    """Makes, takes and submits in one call: slots is a list of (buffer, access). Returns the point."""
    sub = Submission(device, parts, [a for _, a in slots])
    try:
        run = sub.take()
        try:
            for i, (b, _) in enumerate(slots):
                run.set_buffer(i, b)
            return run.submit()
        finally:
            run.release()
    finally:
        sub.release()


class Verdict(_Owned):
    """An answer of mapped registration."""

    _release_fn = staticmethod(rig_verdict_release)

    @property
    def kind(self):
        return rig_verdict_get_kind(self._raw)

    @property
    def kind_name(self):
        return rig_verdict_kind_name(self.kind)

    @property
    def refusal(self):
        return rig_verdict_refusal(self._raw)

    @property
    def refusal_name(self):
        return rig_refusal_name(self.refusal)

    @property
    def reason(self):
        return rig_verdict_reason(self._raw)

    @property
    def cacheable(self):
        return rig_verdict_cacheable(self._raw)

    def speeds(self):
        return rig_verdict_speeds(self._raw)

    def __str__(self):
        return rig_verdict_to_string(self._raw)


def _verdict_or_none(raw):
    return None if raw is None else Verdict(raw)


def static_verdict(device):
    """The static verdict, or None when the self-test is required."""
    return _verdict_or_none(rig_static_verdict(device._raw))


def static_verdict_for(framework, kind, facts=None):
    return _verdict_or_none(rig_py_static_verdict_for(framework, kind, facts))


def probe_with(ops, map, reference, min_relative_speed=0.0, log=None):
    """The self-test over ops written in Python (see python.i, rig_py_probe_with)."""
    return Verdict(rig_py_probe_with(ops, map, reference, min_relative_speed, log))


def probe(device, map, reference, min_relative_speed=0.0, log=None):
    return Verdict(rig_py_probe(device._raw, map, reference, min_relative_speed, log))


def host_register(device, data, access=RIG_ACCESS_READ):
    rig_host_register(device._raw, data, access)


def host_unregister(device, data):
    rig_host_unregister(device._raw, data)


def host_is_registered(data):
    return rig_host_is_registered(data)
