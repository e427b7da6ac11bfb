# The Python binding's test: the seed's hello-world ordering program, rig's errors as rig.Error, callbacks
# (read, write, host kernels, probe ops, log) written in Python, and the buffer protocol without copies.
# Run by meson as the test `binding-python` (PYTHONPATH names the built module).
import mmap
import os
import sys

import rig

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def expect_error(fn, status, words, what):
    try:
        fn()
    except rig.Error as e:
        check(e.status == status and words in e.message and e.name == rig.rig_status_name(status),
              "%s raises %s with rig's message (got %s: %r)" % (what, rig.rig_status_name(status), e.name, e.message))
        return e
    check(False, "%s raises rig.Error" % what)


def hello_world():
    # Two memory devices stand for two GPUs; the program names no point, and still prints the bytes.
    a = rig.memory_device("A")
    b = rig.memory_device("B")
    src = rig.Buffer.wrap(b"hello, world")
    x = rig.Buffer.create(a, 12)
    y = rig.Buffer.create(b, 12)
    rig.submit(a, [rig.copy(0, 1)], [(src.borrow(a), rig.READ), (x, rig.WRITE)])
    rig.submit(b, [rig.copy(0, 1)], [(x.borrow(b), rig.READ), (y, rig.WRITE)])
    out = bytearray(12)
    y.read_into(0, out)
    print(out.decode())
    check(out == b"hello, world", "hello world: y holds the bytes after two copies across devices")
    check(a.submitted() == 1 and b.submitted() == 1, "each device took one value")
    return a, b


def errors(a):
    x = rig.Buffer.create(a, 12)
    expect_error(lambda: x.view(8, 8), rig.RIG_INVALID_ARGUMENT, "", "an out-of-range view")
    x.release()
    e = expect_error(lambda: len(x), rig.RIG_INVALID_HANDLE, "", "a released buffer")
    check(bool(e and e.message), "the released-handle error carries a message: %r" % (e and e.message))
    expect_error(lambda: rig.memory_device(""), rig.RIG_INVALID_ARGUMENT, "", "an empty device name")
    # A read-only wrap refuses a write: rig's rule, not Python's.
    ro = rig.Buffer.wrap(b"abcd")
    expect_error(lambda: ro.write_from(0, b"z"), rig.RIG_INVALID_ARGUMENT, "", "a write into read-only bytes")


def callbacks(a):
    buf = rig.Buffer.create(a, 8)

    def fill(view):
        view[:] = b"ABCDEFGH"

    buf.write(fill)
    seen = []
    buf.read(lambda view: seen.append(bytes(view)))
    check(seen == [b"ABCDEFGH"], "read/write callbacks see the buffer's bytes")

    kept = []
    buf.read(kept.append)
    try:
        kept[0][0]
        check(False, "a view kept after its callback is released")
    except ValueError:
        check(True, "a view kept after its callback is released")

    class Boom(Exception):
        pass

    def raising(view):
        raise Boom("from the callback")

    try:
        buf.read(raising)
        check(False, "an exception in a read callback propagates")
    except Boom:
        check(True, "an exception in a read callback propagates")

    # A host kernel written in Python: upper-cases slot 0 into slot 1.
    dst = rig.Buffer.create(a, 8)
    src = rig.Buffer.wrap(bytearray(b"abcdefgh"))

    def upper(slots):
        slots[1][:] = bytes(slots[0]).upper()

    rig.submit(a, [rig.host_kernel(upper)], [(src.borrow(a), rig.READ), (dst, rig.WRITE)])
    check(dst.to_bytes() == b"ABCDEFGH", "a host kernel written in Python runs on a memory device")

    def ro_write(slots):
        slots[0][0] = 0

    try:
        rig.submit(a, [rig.host_kernel(ro_write)], [(src.borrow(a), rig.READ), (dst, rig.WRITE)])
        check(False, "a host kernel cannot write a read slot")
    except TypeError:
        check(True, "a host kernel cannot write a read slot (read-only view)")

    def failing(slots):
        raise Boom("kernel")

    try:
        rig.submit(a, [rig.host_kernel(failing)], [(dst, rig.WRITE)])
        check(False, "a host kernel's exception is raised by submit")
    except Boom:
        check(True, "a host kernel's exception is raised by submit")

    # The buffer protocol: a bytearray wrapped without a copy sees rig's writes.
    backing = bytearray(4)
    wrapped = rig.Buffer.wrap(backing)
    wrapped.write_from(0, b"wxyz")
    check(backing == b"wxyz", "a wrapped bytearray is the buffer's memory (no copy)")
    try:
        import numpy
        arr = numpy.zeros(4, dtype=numpy.uint8)
        nb = rig.Buffer.wrap(arr)
        nb.write_from(0, b"\x01\x02\x03\x04")
        check(list(arr) == [1, 2, 3, 4], "a wrapped numpy array is the buffer's memory (no copy)")
    except ImportError:
        print("skip numpy not installed: the numpy case is not run")


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


def probes():
    length = 256 * 1024
    data = os.urandom(length)
    m = mmap.mmap(-1, length)  # page-aligned, as a file mapping is
    m[:] = data
    logs = []
    ops = WrongBytes()
    v = rig.probe_with(ops, m, data, log=logs.append)
    print("verdict:", v, "| log lines:", len(logs))
    check(v.kind == rig.RIG_VERDICT_REFUSED and v.refusal == rig.RIG_REFUSAL_WRONG_BYTES,
          "probe_with over Python ops: a wrong-bytes double is Refused (Wrong_bytes)")
    check(v.cacheable, "Refused (Wrong_bytes) is cacheable")
    check(ops.registered == [] and ops.allocated == 0, "the probe released all it registered and allocated")
    v2 = rig.probe_with(Faithful(), m, data)
    check(v2.kind != rig.RIG_VERDICT_REFUSED, "faithful ops are not refused (got %s)" % v2)

    class Raising(Faithful):
        def register_host(self, view):
            raise RuntimeError("driver said no")

    lines = []
    v3 = rig.probe_with(Raising(), m, data, log=lines.append)
    check(v3.kind == rig.RIG_VERDICT_INCONCLUSIVE, "an op that raises makes the verdict Inconclusive (%s)" % v3)
    check(any("driver said no" in l for l in lines), "the op's exception text reaches the log")

    class OOM(Faithful):
        def alloc_host(self, length):
            raise MemoryError()

    try:
        rig.probe_with(OOM(), m, data)
        check(False, "MemoryError in an op is raised by probe_with")
    except MemoryError:
        check(True, "MemoryError in an op is raised by probe_with")
    try:
        rig.probe_with(WrongBytes(), m, data[:-1])
        check(False, "map and reference of different lengths are refused")
    except ValueError:
        check(True, "map and reference of different lengths are refused")
    sv = rig.static_verdict_for("Vulkan", rig.RIG_DEVICE_GPU, lambda fact: 0)
    check(sv is not None and sv.refusal == rig.RIG_REFUSAL_KERNEL_HAZARD, "Vulkan is refused statically")
    sv = rig.static_verdict_for("CUDA", rig.RIG_DEVICE_GPU, lambda fact: 1 if fact == rig.RIG_FACT_INTEGRATED else 0)
    check(sv is not None and sv.refusal == rig.RIG_REFUSAL_INTEGRATED_GPU, "an integrated CUDA device is refused")


def threads():
    # Several Python threads submit host kernels at once: every raw call releases the GIL and every
    # trampoline takes it back, so they neither deadlock nor lose a kernel's bytes.
    import threading

    errors_seen = []

    def worker(n):
        try:
            d = rig.memory_device("T%d" % n)
            buf = rig.Buffer.create(d, 4)
            for i in range(50):
                rig.submit(d, [rig.host_kernel(lambda slots, i=i: slots[0].__setitem__(slice(0, 4), bytes([i % 256]) * 4))],
                           [(buf, rig.WRITE)])
                if buf.to_bytes() != bytes([i % 256]) * 4:
                    errors_seen.append("thread %d round %d" % (n, i))
        except Exception as e:  # noqa: BLE001 - reported below
            errors_seen.append(repr(e))

    ts = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    check(not errors_seen and not any(t.is_alive() for t in ts),
          "4 threads x 50 host-kernel submits: no deadlock, no lost bytes (%s)" % errors_seen[:2])


a, b = hello_world()
threads()
def numpy_borrows():
    # numpy memory (not page-aligned) borrowed onto the CUDA or HIP device of a driver double (meson's
    # binding-python[cuda-fake] and [hip-fake] name it): the device copies the array's bytes in place.
    names = [n for var, n in (("RIG_CUDA_LIBRARY", "cuda:0"), ("RIG_HIP_LIBRARY", "hip:0")) if os.environ.get(var)]
    if not names:
        return
    try:
        import numpy
    except ImportError:
        print("skip numpy not installed: the numpy borrows are not run")
        return
    for name in names:
        d = rig.device_open(name)
        arr = numpy.arange(5000, dtype=numpy.uint8)
        part = arr[3:4003]  # starts 3 bytes into numpy's allocation: on no page boundary
        src = rig.Buffer.wrap(part)
        on_d = src.borrow(d)
        x = rig.Buffer.create(d, len(part))
        rig.submit(d, [rig.copy(0, 1)], [(on_d, rig.READ), (x, rig.WRITE)])
        out = bytearray(len(part))
        x.read_into(0, out)
        check(bytes(out) == part.tobytes(), "numpy memory borrowed onto %s is copied in place" % name)
        for b in (on_d, src, x):
            b.release()
        d.release()


errors(a)
callbacks(a)
probes()
numpy_borrows()
print("binding-python: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
