# Errors: one exception class per status with rig's own message, timeouts in seconds, callbacks' own
# exceptions raised by the call that ran them.
import time

import pytest

import rig


def test_out_of_range_view_is_invalid_argument_and_a_value_error(device):
    x = rig.Buffer.create(device, 12)
    with pytest.raises(rig.InvalidArgument) as info:
        x.view(8, 8)
    e = info.value
    assert isinstance(e, ValueError) and isinstance(e, rig.RigError)
    assert e.status == rig.Status.INVALID_ARGUMENT and e.name == "RIG_INVALID_ARGUMENT"
    assert e.message and e.message in str(e)


def test_released_buffer_raises_invalid_handle_with_rigs_message(device):
    x = rig.Buffer.create(device, 12)
    x.close()
    assert x.closed
    with pytest.raises(rig.InvalidHandle) as info:
        len(x)
    assert info.value.status == rig.Status.INVALID_HANDLE and info.value.message
    x.close()  # a second close does nothing


def test_empty_device_name_and_unknown_device(device):
    with pytest.raises(rig.InvalidArgument):
        rig.memory_device("")
    with pytest.raises(rig.NotFound) as info:
        rig.open_device("nosuchdriver:0")
    assert isinstance(info.value, LookupError) and info.value.message


def test_open_device_takes_the_names_rig_devices_lists():
    # `rig devices` lists memory:NAME, the rig command takes it, and so does open_device
    with rig.open_device("memory:A") as a:
        assert a.kind == rig.DeviceKind.MEMORY and a.name == "A"
    with pytest.raises(rig.InvalidArgument):
        rig.open_device("memory:")


def test_a_device_by_name_opens_it_as_open_device_does():
    # rig.Device("cuda:0") reads as torch.device("cuda:0"): it opens the device, and a bad name raises at once
    with rig.Device("memory:B") as b:
        assert b.kind == rig.DeviceKind.MEMORY and b.name == "B" and b.submitted() == 0
    with pytest.raises(rig.NotFound):
        rig.Device("nosuchdriver:0")
    with pytest.raises(rig.InvalidArgument):
        rig.Device("memory:")


def test_read_only_wrap_refuses_a_write():
    ro = rig.Buffer.wrap(b"abcd")
    with pytest.raises(rig.InvalidArgument):
        ro.write_from(0, b"z")


def test_every_status_has_its_class():
    for status in rig.Status:
        if status == rig.Status.OK:
            continue
        assert rig.status_name(status) == "RIG_" + status.name
    assert issubclass(rig.Timeout, TimeoutError) and issubclass(rig.Interrupted, InterruptedError)
    assert issubclass(rig.OutOfMemory, MemoryError) and issubclass(rig.NotFound, LookupError)
    assert rig.Error is rig.RigError


def test_wait_times_out_after_seconds_as_a_timeout_error(gpu_delay):
    # Memory devices run work inline, so nothing is ever pending there: a GPU (the fake libcuda in CI)
    # runs a kernel that stays busy for 2 s.
    device, delay = gpu_delay
    point = delay(2.0)
    begin = time.monotonic()
    with pytest.raises(TimeoutError) as info:
        device.wait(device.submitted(), timeout=0.2)
    waited = time.monotonic() - begin
    assert isinstance(info.value, rig.Timeout) and info.value.status == rig.Status.TIMEOUT
    assert info.value.message
    assert waited >= 0.15  # seconds, not nanoseconds: 0.2 read as 0.2 ns would return at once
    with pytest.raises(rig.Timeout):
        rig.wait_point(point, timeout=0)  # 0 only looks
    rig.wait_point(point, timeout=60.0)
    assert device.signaled() == device.submitted()


def test_interrupted_wait_is_an_interrupted_error(gpu_delay):
    device, delay = gpu_delay
    point = delay(2.0)
    rig.interrupt_waits(True)
    try:
        with pytest.raises(InterruptedError) as info:
            rig.wait_point(point)
        assert isinstance(info.value, rig.Interrupted)
    finally:
        rig.interrupt_waits(False)
    rig.wait_point(point, timeout=60.0)


def test_bad_timeouts_and_values_are_value_errors(device):
    with pytest.raises(ValueError):
        device.wait(0, timeout=-1)
    with pytest.raises(ValueError):
        device.wait(0, timeout=float("nan"))
    with pytest.raises(rig.InvalidArgument):
        device.wait(5, timeout=float("inf"))  # a value never submitted


def test_callback_exception_propagates(device):
    class Boom(Exception):
        pass

    buf = rig.Buffer.create(device, 8)

    def raising(view):
        raise Boom("from the callback")

    with pytest.raises(Boom):
        buf.read(raising)

    def failing(slots):
        raise Boom("kernel")

    with pytest.raises(Boom):
        rig.submit(device, [rig.host_kernel(failing)], [(buf, rig.WRITE)])


def test_host_kernel_cannot_write_a_read_slot(device):
    src = rig.Buffer.wrap(bytearray(b"abcdefgh"))
    dst = rig.Buffer.create(device, 8)

    def ro_write(slots):
        slots[0][0] = 0

    with pytest.raises(TypeError):
        rig.submit(device, [rig.host_kernel(ro_write)], [(src.borrow(device), rig.READ), (dst, rig.WRITE)])


_LOSE_DEVICE = """
import struct
import sys
import rig
device = rig.open_device("cuda:0")
with open(sys.argv[1], "rb") as f:
    module = rig.Module.load(device, rig.ModuleFormat.PTX, f.read())
buf = rig.Buffer.create(device, 4)
# rig_fault(where) stores to `where`: 0x10, an address no allocation holds, as a scalar (no slots: a slot
# would pass the buffer's own, valid, address, which a GPU writes without a fault).
with rig.Submission(device, [rig.launch(module, "rig_fault", (1,), (1,), [])], []) as sub, sub.take() as run:
    run.set_scalars(struct.pack("<Q", 0x10))
    try:
        rig.wait_point(run.submit())
        sys.exit("the faulting kernel did not lose the device")
    except rig.DeviceLost:
        pass
assert device.lost_reason()
try:
    rig.submit(device, [rig.fill(0, 1)], [(buf, rig.WRITE)])
    sys.exit("a submit after the loss did not raise DeviceLost")
except rig.DeviceLost as e:
    print("lost:", e)
"""


def test_lost_device_raises_device_lost(cuda_device):
    # A kernel that faults (tests/cuda/kernels.ptx's rig_fault; the fake libcuda makes the fault sticky as
    # a GPU does) loses the device for good: every later call raises DeviceLost with the driver's words.
    # In a child process: a faulted context can run nothing more in its process, and the other tests of
    # this one use cuda:0 after this.
    import os
    import subprocess
    import sys

    ptx = os.environ.get("RIG_TEST_CUDA_PTX", "")
    if not os.path.isfile(ptx):
        pytest.skip("RIG_TEST_CUDA_PTX does not name tests/cuda/kernels.ptx: no kernel that faults")
    child = subprocess.run([sys.executable, "-c", _LOSE_DEVICE, ptx], capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert child.returncode == 0, child.stdout + child.stderr
    assert "lost:" in child.stdout
