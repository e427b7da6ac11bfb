#!/usr/bin/env python3
"""Issue 13 on a real GPU: numpy memory of any alignment borrowed onto a CUDA or HIP device, through ctypes on the
carried librig.so.0 (the GPU machine's Python is not the one the SWIG module is built for; the binding's own
numpy borrow test runs on the driver doubles in CI).

  1. For slices of a numpy array at odd offsets and lengths (none starting on a page): wrap the slice
     (rig_buffer_wrap), borrow it onto cuda:0, copy it into a device buffer, copy that back into a second
     numpy array's slice, also wrapped and borrowed, and compare every byte with numpy.
  2. Two wraps inside one page, both borrowed at once, released in either order: both copies right.
  3. Overlapping views of one device allocation copied onto each other: refused (RIG_INVALID_ARGUMENT).

Usage: borrow_numpy.py BUILD_DIR [DEVICE]   (DEVICE: cuda:0, the default, or hip:0; exit 0: all checks
passed; 1: a check failed or RIG_REQUIRE names the device's API and it did not open; 2: no such device)
"""
import ctypes as C
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_torch import Part, Rig, READ, WRITE, FOREVER  # noqa: E402  (the ctypes layer, one copy)

RIG_PART_COPY, WHOLE = 1, (1 << 64) - 1


def bind(rig):
    L = rig.lib
    L.rig_buffer_wrap.argtypes = [C.c_void_p, C.c_size_t, C.c_int, C.c_void_p, C.c_void_p, C.POINTER(C.c_void_p)]
    L.rig_buffer_borrow.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(C.c_void_p)]
    L.rig_buffer_view.argtypes = [C.c_void_p, C.c_size_t, C.c_size_t, C.POINTER(C.c_void_p)]
    for f in (L.rig_buffer_wrap, L.rig_buffer_borrow, L.rig_buffer_view):
        f.restype = C.c_int


def copier(rig, device):
    p = Part(size=C.sizeof(Part), kind=RIG_PART_COPY, src_slot=0, dst_slot=1, length=WHOLE)
    acc = (C.c_int * 2)(READ, WRITE)
    return rig.out("submission_make", device, C.byref(p), 1, acc, 2)


def copy(rig, sub, src, dst):
    """A copy by a run of its own: a run keeps its buffers (and so the wraps' memory) until released, and
    the numpy arrays are freed between the checks."""
    run = rig.out("run_take", sub)
    try:
        rig.run_set_buffer(run, 0, src)
        rig.run_set_buffer(run, 1, dst)
        return rig.out("submit", run, None, 0, kind=C.c_uint64)
    finally:
        rig.run_release(run)


def borrowed(rig, device, array, offset, length, access):
    """array[offset:offset+length] wrapped and borrowed onto device: (wrap, borrow)."""
    addr = array.ctypes.data + offset
    w = rig.out("buffer_wrap", C.c_void_p(addr), length, access, None, None)
    b = rig.out("buffer_borrow", device, w)
    return w, b


def main():
    import numpy as np
    build = sys.argv[1]
    rig = Rig(build)
    bind(rig)
    name = sys.argv[2] if len(sys.argv) > 2 else "cuda:0"
    try:
        gpu = rig.out("device_open", name.encode())
    except RuntimeError as e:
        print("no device %s: %s" % (name, e))
        return 1 if name.split(":")[0] in os.environ.get("RIG_REQUIRE", "") else 2
    sub = copier(rig, gpu)
    failures = 0
    rng = np.random.default_rng(13)
    src = rng.integers(0, 256, size=(8 << 20) + 4096, dtype=np.uint8)
    for offset, length in [(1, 12), (3, 4095), (4097, 65537), (123, 1 << 20), (7, (8 << 20) - 11)]:
        dst = np.zeros_like(src)
        assert (src.ctypes.data + offset) % 4096 != 0
        dev = rig.out("buffer_create", gpu, length, 0)
        ws, bs = borrowed(rig, gpu, src, offset, length, READ)
        wd, bd = borrowed(rig, gpu, dst, offset, length, WRITE)
        copy(rig, sub, bs, dev)
        p = copy(rig, sub, dev, bd)
        rig.wait_point(p, FOREVER)
        ok = np.array_equal(dst[offset:offset + length], src[offset:offset + length]) and not dst[:offset].any() \
            and not dst[offset + length:].any()
        print("numpy slice at offset %d, %d bytes, borrowed onto %s and back: %s" %
              (offset, length, name, "ok" if ok else "WRONG BYTES"))
        failures += not ok
        for b in (bs, ws, bd, wd, dev):
            rig.buffer_release(b)
    # Two wraps on one page, both borrowed at once, released in either order.
    for order in ("first-first", "second-first"):
        page = np.zeros(8192, dtype=np.uint8)
        base = (-page.ctypes.data) % 4096  # the offset of a page start inside the array
        page[base:base + 4096] = rng.integers(0, 256, size=4096, dtype=np.uint8)
        a = borrowed(rig, gpu, page, base + 10, 100, READ)
        b = borrowed(rig, gpu, page, base + 2000, 1000, READ)
        dev = rig.out("buffer_create", gpu, 1100, 0)
        va = rig.out("buffer_view", dev, 0, 100)
        vb = rig.out("buffer_view", dev, 100, 1000)
        copy(rig, sub, a[1], va)
        rig.wait_point(copy(rig, sub, b[1], vb), FOREVER)
        out = (C.c_uint8 * 1100)()
        rig.buffer_read_into(dev, 0, out, 1100)
        got = np.frombuffer(out, dtype=np.uint8)
        ok = np.array_equal(got[:100], page[base + 10:base + 110]) and \
            np.array_equal(got[100:], page[base + 2000:base + 3000])
        first, second = (a, b) if order == "first-first" else (b, a)
        for h in (first[1], first[0], second[1], second[0], va, vb, dev):
            rig.buffer_release(h)
        print("two wraps on one page borrowed onto %s, released %s: %s" % (name, order, "ok" if ok else "WRONG BYTES"))
        failures += not ok
    # Overlapping views of one allocation: refused on every device (rig.h's rule).
    dev = rig.out("buffer_create", gpu, 1 << 20, 0)
    v1 = rig.out("buffer_view", dev, 0, 65536)
    v2 = rig.out("buffer_view", dev, 256, 65536)
    try:
        copy(rig, sub, v1, v2)
        print("overlapping copy: accepted (WRONG: rig.h says RIG_INVALID_ARGUMENT)")
        failures += 1
    except RuntimeError as e:
        ok = "INVALID_ARGUMENT" in str(e)
        print("overlapping copy refused: %s (%s)" % ("ok" if ok else "WRONG STATUS", e))
        failures += not ok
    for h in (v1, v2, dev):
        rig.buffer_release(h)
    rig.submission_release(sub)
    rig.device_release(gpu)
    print("failures: %d" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
