"""Devices: the host, memory devices, GPUs; their timelines and waits."""

import operator
import threading

from . import _rig
from ._enums import DeviceKind
from ._owned import Owned, timeout_ns
from ._point import point_of, refuse_point


class Device(Owned):
    """A device: the host, a memory device (host memory, work runs inline) or a driver's GPU/CPU device.

    Make one with host(), memory_device(name) or open_device(name), or by name as torch.device reads:
    ``rig.Device("cuda:0")`` is ``open_device("cuda:0")``. Close it (or use ``with``) when done.
    Its timeline counts submissions: submitted() is the last value taken, signaled() the last reached.
    """

    _release_fn = staticmethod(_rig.rig_device_release)
    _borrowed = False  # a handle rig owns (a buffer's device): never released from Python

    def __init__(self, raw, keep=None):
        # A name opens the device (open_device's handle, this object its owner); anything else is rig's
        # handle, as the module's functions pass it. Without this a name was kept as the handle, and the
        # object failed at its first use with SWIG's words about an argument's type.
        if isinstance(raw, str):
            raw = _open_raw(raw)
        Owned.__init__(self, raw, keep)

    def close(self):
        """Releases the device (a buffer's device, not Python's to release, only reads as closed)."""
        if self._borrowed:
            self._released = True
            return
        Owned.close(self)

    release = close

    def __del__(self):
        if not self._borrowed:
            Owned.__del__(self)

    def info(self):
        """A dict: name, framework, model, kind, index, memory_bytes, integrated, lost."""
        info = _rig.rig_device_get_info(self._raw)
        info["kind"] = DeviceKind(info["kind"])
        return info

    @property
    def name(self):
        """The device's name: a driver's as open_device takes it ("cuda:0"), a memory device's as
        memory_device was given it ("A": open_device takes "memory:A")."""
        return self.info()["name"]

    @property
    def kind(self):
        return self.info()["kind"]

    def submitted(self):
        """The timeline value of the last submission to this device (0: none yet)."""
        return _rig.rig_device_submitted(self._raw)

    def signaled(self):
        """The last timeline value this device has reached."""
        return _rig.rig_device_signaled(self._raw)

    def wait(self, value, timeout=None):
        """Waits until the device reaches timeline value ``value``. ``timeout`` in seconds (float; None
        waits forever, 0 only looks); raises Timeout (also a TimeoutError) when it passes. A Point is
        refused with TypeError: it names a device of its own, so wait_point(p) is its wait."""
        refuse_point(value, "Device.wait")
        _rig.rig_device_wait(self._raw, value, timeout_ns(timeout))

    def point(self, value):
        """The Point of timeline value ``value`` of this device (a Point as ``value``: TypeError)."""
        refuse_point(value, "Device.point")
        return point_of(_rig.rig_device_point(self._raw, value), self)

    def lost_reason(self):
        """Why the device is lost, or None while it is not."""
        return _rig.rig_device_lost_reason(self._raw)

    def __repr__(self):
        if self._released:
            return "<rig.Device closed>"
        try:
            info = self.info()
            return "<rig.Device %r kind=%s submitted=%d signaled=%d>" % (
                info["name"], info["kind"].name.lower(), self.submitted(), self.signaled())
        except Exception as e:  # noqa: BLE001 - a repr never raises
            return "<rig.Device (%s)>" % e


def _borrowed_device(raw):
    """A Device over a buffer's device handle: open (it reprs as the device it is) but never released
    from Python, since the buffer, not this object, holds it."""
    d = Device(raw)
    d._borrowed = True
    return d


def host():
    """The host: the caller's own code, never stamped."""
    return Device(_rig.rig_host())


def memory_device(name):
    """A new memory device named ``name`` (each call makes another device, even for a name already
    open): host memory, work inline."""
    return Device(_rig.rig_memory_device(name))


def _open_raw(name):
    """rig's handle of the device named ``name`` (open_device's names), newly opened."""
    # rig_device_open opens drivers' devices only; `rig devices` lists memory:NAME beside them, and the
    # command opens it with rig_memory_device: so does this, rather than answer that it is no driver.
    if name.startswith("memory:"):
        return _rig.rig_memory_device(name[len("memory:"):])
    return _rig.rig_device_open(name)


def open_device(name):
    """The device named ``name``: "cuda:0", "hip:0", "vulkan:0" as device_list() gives them, or
    "memory:NAME" (a new memory_device(NAME)), the names the rig command's --device takes."""
    if isinstance(name, str):
        return Device(_open_raw(name))
    return Device(_rig.rig_device_open(name))


def device_list():
    """The names of the devices rig sees, each one open_device accepts, as `rig devices` lists them:
    first "memory:NAME", which stands for any number of memory devices (open_device("memory:A") makes
    one called A), then the drivers' devices ("cuda:0", "hip:0", "vulkan:0")."""
    names = ["memory:NAME"]
    while True:
        name = _rig.rig_swig_device_name(len(names) - 1)
        if name is None:
            return names
        names.append(name)


def wait_point(point, timeout=None):
    """Waits until ``point`` (a Point, or its int) is reached; timeout in seconds (None: forever). Raises
    Timeout."""
    _rig.rig_wait_point(operator.index(point), timeout_ns(timeout))


def interrupt_waits(on):
    """While on, every rig wait returns Interrupted (also an InterruptedError) instead of waiting."""
    _rig.rig_interrupt_waits(1 if on else 0)


_named = {}  # name -> Device opened by named_device, kept for the life of the process
_named_lock = threading.Lock()


def named_device(device):
    """The Device ``device`` names, opened once per process and kept open from then on, so that a tensor
    handed out on it never outlives its device: "cuda:0", "vulkan:0", "memory:A", "cpu" (the memory device
    "cpu": host memory), an int n ("cuda:n") or a torch.device. A Device is returned as it is (its owner
    keeps it open). TypeError for anything else; rig's NotFound where no device has the name."""
    if isinstance(device, Device):
        return device
    if isinstance(device, bool) or not isinstance(device, (str, int)):
        kind, index = getattr(device, "type", None), getattr(device, "index", None)  # torch.device
        if not isinstance(kind, str):
            raise TypeError("device: a rig.Device, a name (\"cuda:0\", \"memory:A\", \"cpu\"), an int or a "
                            "torch.device, not %r" % (device,))
        device = kind if index is None or kind == "cpu" else "%s:%d" % (kind, index)
        if device == "cuda":
            device = "cuda:0"
    if isinstance(device, int):
        device = "cuda:%d" % device
    name = "memory:cpu" if device == "cpu" else device
    with _named_lock:  # two threads naming one device get one Device
        if name not in _named or _named[name].closed:  # closed by a caller: open it again
            _named[name] = open_device(name)
        return _named[name]
