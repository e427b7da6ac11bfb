"""Mapped registration: verdicts on whether a device may copy straight from a registered file mapping."""

from . import _rig
from ._enums import Access, DeviceKind, Refusal, VerdictKind
from ._owned import Owned


class Verdict(Owned):
    """An answer of mapped registration: kind (a VerdictKind), refusal (a Refusal), reason, cacheable."""

    _release_fn = staticmethod(_rig.rig_verdict_release)

    @property
    def kind(self):
        return VerdictKind(_rig.rig_verdict_get_kind(self._raw))

    @property
    def kind_name(self):
        return _rig.rig_verdict_kind_name(int(self.kind))

    @property
    def refusal(self):
        return Refusal(_rig.rig_verdict_refusal(self._raw))

    @property
    def refusal_name(self):
        return _rig.rig_refusal_name(int(self.refusal))

    @property
    def reason(self):
        """rig's words for why this verdict (None where there is nothing to add)."""
        return _rig.rig_verdict_reason(self._raw)

    @property
    def cacheable(self):
        """Whether the verdict may be kept for this device and driver version."""
        return _rig.rig_verdict_cacheable(self._raw)

    def speeds(self):
        """(registered, staged) speeds the probe measured, bytes per second (0 where not measured)."""
        return tuple(_rig.rig_verdict_speeds(self._raw))

    def __str__(self):
        return _rig.rig_verdict_to_string(self._raw)

    def __repr__(self):
        if self._released:
            return "<rig.Verdict closed>"
        return "<rig.Verdict %s>" % self


def _verdict_or_none(raw):
    return None if raw is None else Verdict(raw)


def static_verdict(device):
    """The static verdict for ``device``, or None when the self-test (probe) is required."""
    return _verdict_or_none(_rig.rig_static_verdict(device._raw))


def static_verdict_for(framework, kind, facts=None):
    """The static table's verdict for a framework ("CUDA", "HIP", "Vulkan") and DeviceKind;
    ``facts(fact)`` answers 1, 0 or -1 for a Fact. None when the self-test is required."""
    return _verdict_or_none(_rig.rig_py_static_verdict_for(framework, int(DeviceKind(kind)), facts))


def probe_with(ops, map, reference, min_relative_speed=0.0, log=None):
    """The self-test over ops written in Python: an object with register_host(view),
    unregister_host(view), alloc_host(length) -> writable buffer, free_host(obj), round_trip(host, into),
    upload(view) and optionally now_ns(). ``map`` and ``reference`` are equal-length buffers; ``log``
    (a callable of one str) gets the probe's progress."""
    return Verdict(_rig.rig_py_probe_with(ops, map, reference, min_relative_speed, log))


def probe(device, map, reference, min_relative_speed=0.0, log=None):
    """The self-test on a rig device over ``map`` (the mapping) and ``reference`` (its expected bytes)."""
    return Verdict(_rig.rig_py_probe(device._raw, map, reference, min_relative_speed, log))


def host_register(device, data, access=Access.READ):
    """Registers data's bytes (any buffer) with ``device`` (read-only for Access.READ)."""
    _rig.rig_host_register(device._raw, data, int(access))


def host_unregister(device, data):
    """Unregisters the range host_register registered over data's bytes."""
    _rig.rig_host_unregister(device._raw, data)


def host_is_registered(data):
    """Whether data's bytes lie in a range registered with rig."""
    return _rig.rig_host_is_registered(data)
