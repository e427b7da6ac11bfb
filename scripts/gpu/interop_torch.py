#!/usr/bin/env python3
"""rig_interop.h against PyTorch and CuPy on a real GPU, through ctypes on librig (the GPU machine's Python
is not the one the SWIG module is built for, so this drives librig.so.0 of the carried build directly).

  1. ordering: a PyTorch tensor's device memory wrapped as a rig buffer (rig_buffer_wrap_device); each
     round a rig kernel (rig_add_u32 of tests/cuda/kernels.ptx) adds k in place, torch's current stream
     waits for it (rig_stream_wait_point), torch reads the tensor (y = x * 3 + 1) and writes it (x += 1),
     and rig's next kernel follows torch's work (rig_stream_point + rig_buffer_stamp). No host
     synchronisation inside the rounds: each y is compared element by element with a reference torch keeps
     alone, on its own stream order, and the mismatches are counted on the GPU; one host read at the end.
  2. torch.from_dlpack and cupy.from_dlpack of rig buffers: same device pointer (no copy), rig's bytes,
     after rig's last write through the stream protocol (__dlpack__(stream) -> rig_stream_wait_point).

Usage: interop_torch.py BUILD_DIR [ROUNDS]   (exit 0: all checks passed; 1: a check failed; 2: setup)
With RIG_CUDA_LIBRARY naming the fake libcuda and no torch, only the ctypes layer is rehearsed.
"""
import ctypes as C
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Part(C.Structure):  # rig_part (rig.h), field for field
    _fields_ = [("size", C.c_size_t), ("kind", C.c_int), ("src_slot", C.c_uint32), ("dst_slot", C.c_uint32),
                ("src_offset", C.c_size_t), ("dst_offset", C.c_size_t), ("length", C.c_size_t),
                ("byte", C.c_uint8), ("fn", C.c_void_p), ("user", C.c_void_p), ("module", C.c_void_p),
                ("function", C.c_char_p), ("grid", C.c_uint32 * 3), ("block", C.c_uint32 * 3),
                ("shared_bytes", C.c_uint32), ("slots", C.POINTER(C.c_uint32)), ("slot_count", C.c_uint32)]


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p)]


RIG_PART_LAUNCH, READ, WRITE, READ_WRITE, PTX = 4, 1, 2, 3, 1
FOREVER = (1 << 64) - 1


class Rig:
    """The few rig calls this script makes; every failure raises with rig_last_error()."""

    def __init__(self, build):
        self.lib = C.CDLL(os.path.join(build, "librig.so.0"))
        L = self.lib
        L.rig_last_error.restype = C.c_char_p
        L.rig_status_name.restype = C.c_char_p
        for name, args in {
            "rig_device_open": [C.c_char_p, C.POINTER(C.c_void_p)],
            "rig_device_release": [C.c_void_p],
            "rig_module_load": [C.c_void_p, C.c_int, C.c_char_p, C.c_size_t, C.POINTER(C.c_void_p)],
            "rig_buffer_create": [C.c_void_p, C.c_size_t, C.c_int, C.POINTER(C.c_void_p)],
            "rig_buffer_wrap_device": [C.c_void_p, C.c_uint64, C.c_size_t, C.c_void_p, C.c_void_p,
                                       C.POINTER(C.c_void_p)],
            "rig_buffer_release": [C.c_void_p],
            "rig_buffer_read_into": [C.c_void_p, C.c_size_t, C.c_void_p, C.c_size_t],
            "rig_buffer_device_address": [C.c_void_p, C.POINTER(C.c_uint64)],
            "rig_buffer_last_write": [C.c_void_p, C.POINTER(C.c_uint64)],
            "rig_buffer_stamp": [C.c_void_p, C.c_uint64, C.c_int],
            "rig_buffer_to_dlpack": [C.c_void_p, C.c_uint8, C.c_uint8, C.c_uint16, C.POINTER(C.c_void_p)],
            "rig_stream_wait_point": [C.c_void_p, C.c_void_p, C.c_uint64],
            "rig_stream_point": [C.c_void_p, C.c_void_p, C.POINTER(C.c_uint64)],
            "rig_wait_point": [C.c_uint64, C.c_uint64],
            "rig_submission_make": [C.c_void_p, C.POINTER(Part), C.c_size_t, C.POINTER(C.c_int), C.c_size_t,
                                    C.POINTER(C.c_void_p)],
            "rig_submission_release": [C.c_void_p],
            "rig_run_take": [C.c_void_p, C.POINTER(C.c_void_p)],
            "rig_run_set_buffer": [C.c_void_p, C.c_uint32, C.c_void_p],
            "rig_run_set_scalars": [C.c_void_p, C.c_void_p, C.c_size_t],
            "rig_submit": [C.c_void_p, C.c_void_p, C.c_size_t, C.POINTER(C.c_uint64)],
            "rig_run_release": [C.c_void_p],
        }.items():
            f = getattr(L, name)
            f.argtypes, f.restype = args, C.c_int

    def __getattr__(self, name):
        f = getattr(self.lib, "rig_" + name)

        def call(*args):
            s = f(*args)
            if s != 0:
                raise RuntimeError("rig_%s: %s: %s" % (name, self.lib.rig_status_name(s).decode(),
                                                        self.lib.rig_last_error().decode()))
        return call

    def out(self, name, *args, kind=C.c_void_p):
        v = kind()
        getattr(self, name)(*args, C.byref(v))
        return v.value

    def launch_run(self, device, module, function, n, accesses, slots):
        """A run of one launch of `function` over len(accesses) slots, grid for n elements."""
        p = Part(size=C.sizeof(Part), kind=RIG_PART_LAUNCH, module=module, function=function.encode())
        p.grid[:] = [(n + 255) // 256, 1, 1]
        p.block[:] = [256, 1, 1]
        slot_list = (C.c_uint32 * len(slots))(*slots)
        p.slots, p.slot_count = slot_list, len(slots)
        acc = (C.c_int * len(accesses))(*accesses)
        sub = self.out("submission_make", device, C.byref(p), 1, acc, len(accesses))
        run = self.out("run_take", sub)
        self.submission_release(sub)
        return run

    def launch(self, run, scalars):
        s = (C.c_uint32 * 2)(*scalars)
        self.run_set_scalars(run, s, C.sizeof(s))
        return self.out("submit", run, None, 0, kind=C.c_uint64)


def capsule_of(rig, buf, code, bits):
    """A "dltensor" PyCapsule of rig_buffer_to_dlpack (the consumer calls the deleter)."""
    t = rig.out("buffer_to_dlpack", buf, code, bits, 1)
    new = C.pythonapi.PyCapsule_New
    new.restype, new.argtypes = C.py_object, [C.c_void_p, C.c_char_p, C.c_void_p]
    return new(t, b"dltensor", None)


class Exported:
    """The DLPack protocol over a rig buffer, as rig's Python binding does it (bindings/python/rig/_dlpack.py):
    the consumer's stream waits for rig's last write (rig_stream_wait_point), then the capsule."""

    def __init__(self, rig, device, buf, code, bits, ordinal=0):
        self.rig, self.device, self.buf, self.code, self.bits, self.ordinal = rig, device, buf, code, bits, ordinal
        self.streams = []

    def __dlpack_device__(self):
        return (2, self.ordinal)

    def __dlpack__(self, stream=None, **_):
        self.streams.append(stream)
        if stream != -1:
            native = 0 if stream in (None, 0, 1) else stream  # legacy default: the null stream
            last = self.rig.out("buffer_last_write", self.buf, kind=C.c_uint64)
            self.rig.stream_wait_point(self.device, C.c_void_p(native), last)
        return capsule_of(self.rig, self.buf, self.code, self.bits)


def rehearse(rig, module, gpu):
    """No torch: the ctypes layer on the fake libcuda (struct layouts, launches, wraps, DLPack)."""
    n = 1024
    buf = rig.out("buffer_create", gpu, n * 4, 0)
    address = rig.out("buffer_device_address", buf, kind=C.c_uint64)
    wrapped = rig.out("buffer_wrap_device", gpu, address, n * 4, None, None)
    run = rig.launch_run(gpu, module, "rig_fill_u32", n, [WRITE], [0])
    rig.run_set_buffer(run, 0, wrapped)
    rig.launch(run, [n, 7])
    host = (C.c_uint32 * n)()
    rig.buffer_read_into(wrapped, 0, host, n * 4)  # the wrap's own stamps order this read after the fill
    bad = sum(1 for v in host if v != 7)
    t = C.cast(rig.out("buffer_to_dlpack", wrapped, 1, 32, 1), C.POINTER(DLManagedTensor)).contents
    ok = t.dl_tensor.data == address and t.dl_tensor.shape[0] == n and t.dl_tensor.device.device_type == 2
    C.CFUNCTYPE(None, C.c_void_p)(t.deleter)(C.addressof(t))
    rig.run_release(run)
    rig.buffer_release(wrapped)
    rig.buffer_release(buf)
    print("rehearsal (no torch): %d wrong elements, dlpack %s" % (bad, "ok" if ok else "WRONG"))
    return 0 if bad == 0 and ok else 1


def ordering(rig, torch, gpu, module, rounds, n):
    """Part 1: rig kernels and torch kernels on one tensor, ordered only through rig_interop.h."""
    x = torch.zeros(n, dtype=torch.int32, device="cuda:0")
    ref = torch.zeros(n, dtype=torch.int32, device="cuda:0")  # the same arithmetic, torch alone
    bad = torch.zeros((), dtype=torch.int64, device="cuda:0")
    stream = torch.cuda.Stream()  # a stream of torch's own, not the legacy one: no implicit order with rig
    w = rig.out("buffer_wrap_device", gpu, x.data_ptr(), n * 4, None, None)
    run = rig.launch_run(gpu, module, "rig_add_u32", n, [READ_WRITE], [0, 0])
    rig.run_set_buffer(run, 0, w)
    native = C.c_void_p(stream.cuda_stream)
    # torch.zeros ran on the current (default) stream: rig's first kernel and torch's stream follow it
    made = rig.out("stream_point", gpu, C.c_void_p(torch.cuda.current_stream().cuda_stream), kind=C.c_uint64)
    rig.buffer_stamp(w, made, READ_WRITE)
    stream.wait_stream(torch.cuda.current_stream())
    t0 = time.perf_counter()
    with torch.cuda.stream(stream):
        for r in range(rounds):
            k = 1 + (r * 7919) % 1000
            rig.launch(run, [n, k])                                   # rig writes x (after torch's last round)
            last = rig.out("buffer_last_write", w, kind=C.c_uint64)
            rig.stream_wait_point(gpu, native, last)                   # torch's stream waits for it, in queue
            y = x * 3 + 1                                              # torch reads x
            x.add_(1)                                                  # torch writes x
            point = rig.out("stream_point", gpu, native, kind=C.c_uint64)
            rig.buffer_stamp(w, point, READ_WRITE)                     # rig's next kernel follows torch's
            ref.add_(k)
            bad += (y != ref * 3 + 1).sum()                            # element by element, on the GPU
            ref.add_(1)
        bad += (x != ref).sum()
    enqueue_s = time.perf_counter() - t0
    stream.synchronize()
    mismatches = int(bad.item())
    rig.run_release(run)
    rig.buffer_release(w)  # waits for rig's uses of x before torch frees it
    print("ordering: %d rounds of %d int32 (rig kernel -> torch read/write -> rig kernel), enqueued in %.3f s "
          "with no host synchronisation: %d mismatching elements" % (rounds, n, enqueue_s, mismatches))
    return mismatches == 0


def dlpack(rig, torch, gpu, module, name, from_dlpack, data_ptr, equal_all):
    """Part 2: a rig buffer seen by torch or cupy without a copy, after rig's slow write."""
    n = 1 << 22
    buf = rig.out("buffer_create", gpu, n * 4, 0)
    address = rig.out("buffer_device_address", buf, kind=C.c_uint64)
    # rig's write: a delay then a fill, so a consumer that did not wait would read stale bytes
    delay = rig.launch_run(gpu, module, "rig_delay", 1, [], [])
    s = (C.c_uint64 * 1)(20_000_000)
    rig.run_set_scalars(delay, s, 8)
    rig.out("submit", delay, None, 0, kind=C.c_uint64)
    fill = rig.launch_run(gpu, module, "rig_fill_u32", n, [WRITE], [0])
    rig.run_set_buffer(fill, 0, buf)
    rig.launch(fill, [n, 12345])
    exported = Exported(rig, gpu, buf, 1, 32)
    t = from_dlpack(exported)
    same = data_ptr(t) == address
    right = equal_all(t, 12345)
    print("%s.from_dlpack: stream(s) passed %s, same pointer %s, every element rig's: %s" %
          (name, exported.streams, same, right))
    del t
    rig.run_release(delay)
    rig.run_release(fill)
    rig.buffer_release(buf)
    return same and right


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rig = Rig(build)
    gpu = rig.out("device_open", b"cuda:0")
    with open(os.path.join(ROOT, "tests", "cuda", "kernels.ptx"), "rb") as f:
        ptx = f.read()
    module = rig.out("module_load", gpu, PTX, ptx, len(ptx))
    try:
        import torch
    except ImportError as e:
        if os.environ.get("RIG_CUDA_LIBRARY"):
            return rehearse(rig, module, gpu)
        print("FAIL: torch not importable (%s): the ordering and DLPack checks need it" % e)
        return 2
    ok = ordering(rig, torch, gpu, module, rounds, 1 << 20)
    ok &= ordering(rig, torch, gpu, module, 10, 1 << 26)  # long kernels: a missing wait would show
    ok &= dlpack(rig, torch, gpu, module, "torch", torch.from_dlpack, lambda t: t.data_ptr(),
                 lambda t, v: bool((t == v).all().item()))
    try:
        import cupy
    except ImportError as e:
        print("SKIP cupy.from_dlpack: cupy not importable (%s)" % e)
    else:
        ok &= dlpack(rig, torch, gpu, module, "cupy", cupy.from_dlpack, lambda t: t.data.ptr,
                     lambda t, v: bool((t == v).all().get()))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
