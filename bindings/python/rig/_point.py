"""Points: one value of one device's timeline, typed apart from the plain timeline values a device's own
calls take (Device.wait, Device.point), so that handing one where the other goes raises a TypeError
instead of waiting for the wrong thing."""

import threading

from ._enums import DeviceKind

# The packing of rig.h (rig_point_make): the device's index above VALUE_BITS bits of value.
VALUE_BITS = 47
VALUE_MASK = (1 << VALUE_BITS) - 1

# Device index -> the name open_device takes. rig never reuses an index in a process, so a name once
# learnt stays right for every later point of that index.
_names = {}
_names_lock = threading.Lock()


class Point(int):
    """A point (rig_point): a device's index and a value of its timeline in one 64-bit int (0: no point).

    What submit, Run.submit, Device.point and Buffer.stamp_stream return, and what wait_point and a
    submit's waits take. An int, so it still compares, hashes and passes as one; Device.wait, which takes
    a timeline value, refuses it (use rig.wait_point(p) or device.wait(p.value))."""

    __slots__ = ()

    @property
    def device_index(self):
        """The index of the device whose timeline the point is on (0 for no point)."""
        return (int(self) >> VALUE_BITS) & 0xFFFF

    @property
    def value(self):
        """The point's value on that timeline (0 for no point)."""
        return int(self) & VALUE_MASK

    def __repr__(self):
        if not self:
            return "Point(none)"
        index = self.device_index
        return "Point(%s, %d)" % (_names.get(index, "device#%d" % index), self.value)

    __str__ = __repr__


def point_of(raw, device=None):
    """The Point of the raw int ``raw``, learning the name of ``device`` (the Device it is on, where the
    caller has it) for its repr. Learning takes one rig_device_get_info per device index, under no lock
    of rig's."""
    p = Point(raw)
    if device is not None and p and p.device_index not in _names:
        try:
            info = device.info()
        except Exception:  # noqa: BLE001 - the repr falls back to the index; the point stays valid
            return p
        name = info["name"]
        if info["kind"] == DeviceKind.MEMORY:
            name = "memory:" + name  # the name open_device takes
        with _names_lock:  # keyed by the device's own index: a buffer's last write may be another's
            _names.setdefault(info["index"], name)
    return p


def refuse_point(value, what):
    """Raises TypeError where a device's own call that takes a timeline value is handed a Point."""
    if isinstance(value, Point):
        raise TypeError("%s takes a timeline value, and %r is a point: use rig.wait_point(p) or "
                        "device.wait(p.value)" % (what, value))
