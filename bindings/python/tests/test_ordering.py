# The seed's ordering program and work submitted from several threads.
import threading

import rig


def test_hello_world_orders_two_copies_across_devices():
    # Two memory devices stand for two GPUs; the program names no point, and still prints the bytes.
    with rig.memory_device("A") as a, rig.memory_device("B") as b:
        src = rig.Buffer.wrap(b"hello, world")
        x = rig.Buffer.create(a, 12)
        y = rig.Buffer.create(b, 12)
        rig.submit(a, [rig.copy(0, 1)], [(src.borrow(a), rig.READ), (x, rig.WRITE)])
        rig.submit(b, [rig.copy(0, 1)], [(x.borrow(b), rig.READ), (y, rig.WRITE)])
        out = bytearray(12)
        y.read_into(0, out)
        assert out == b"hello, world"
        assert a.submitted() == 1 and b.submitted() == 1


def test_submission_taken_and_submitted_twice_after_a_point(device):
    buf = rig.Buffer.create(device, 4)
    with rig.Submission(device, [rig.fill(0, 0x5A)], [rig.WRITE]) as sub, sub.take() as run:
        run.set_buffer(0, buf)
        first = run.submit()
        second = run.submit([first])
    assert device.point(1) == first and device.point(2) == second
    rig.wait_point(second, timeout=1.0)
    assert device.signaled() == 2
    assert buf.to_bytes() == b"\x5a" * 4


def test_threads_submit_host_kernels_without_deadlock_or_lost_bytes():
    # Every raw call releases the GIL and every trampoline takes it back.
    errors_seen = []

    def worker(n):
        try:
            with rig.memory_device("T%d" % n) as d:
                buf = rig.Buffer.create(d, 4)
                for i in range(50):
                    rig.submit(d, [rig.host_kernel(lambda slots, i=i: slots[0].__setitem__(slice(0, 4),
                                                                                          bytes([i]) * 4))],
                               [(buf, rig.WRITE)])
                    if buf.to_bytes() != bytes([i]) * 4:
                        errors_seen.append("thread %d round %d" % (n, i))
        except Exception as e:  # noqa: BLE001 - reported below
            errors_seen.append(repr(e))

    ts = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not any(t.is_alive() for t in ts)
    assert errors_seen == []


def test_host_kernel_sees_its_slots(device):
    dst = rig.Buffer.create(device, 8)
    src = rig.Buffer.wrap(bytearray(b"abcdefgh"))

    def upper(slots):
        slots[1][:] = bytes(slots[0]).upper()

    rig.submit(device, [rig.host_kernel(upper)], [(src.borrow(device), rig.READ), (dst, rig.WRITE)])
    assert dst.to_bytes() == b"ABCDEFGH"


def test_submit_many_takes_consecutive_values_in_order_or_refuses_all():
    # A chain a -> b -> c in one batch: the second run reads what the first wrote (one device's order).
    with rig.memory_device("A") as a, rig.memory_device("B") as b:
        bufs = [rig.Buffer.create(a, 4) for _ in range(3)]
        bufs[0].write_from(0, b"rig!")
        with rig.Submission(a, [rig.copy(0, 1)], [rig.READ, rig.WRITE]) as sub:
            runs = [sub.take(), sub.take()]
            for i, run in enumerate(runs):
                run.set_buffer(0, bufs[i])
                run.set_buffer(1, bufs[i + 1])
            points = rig.submit_many(runs)
            assert points == [a.point(1), a.point(2)]
            assert bufs[2].to_bytes() == b"rig!"
            # Runs of two devices: refused, nothing assigned on either.
            other = rig.Submission(b, [rig.fill(0, 1)], [rig.WRITE]).take()
            other.set_buffer(0, rig.Buffer.create(b, 4))
            try:
                rig.submit_many([runs[0], other])
                assert False, "a batch of two devices was taken"
            except rig.Error as e:
                assert e.status == rig.Status.INVALID_ARGUMENT
            assert a.submitted() == 2 and b.submitted() == 0
            assert rig.submit_many(runs, [points[1]]) == [a.point(3), a.point(4)]
            for run in runs + [other]:
                run.close()
