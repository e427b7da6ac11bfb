"""What every rig object shares: one handle, released once, and timeouts given in seconds."""

import math

FOREVER_NS = (1 << 64) - 1  # rig's "wait without a timeout"


def timeout_ns(timeout):
    """rig's timeout in nanoseconds for a timeout in seconds: None or math.inf wait forever, 0 only looks.
    A negative or NaN timeout is a ValueError (rig has no such wait)."""
    if timeout is None:
        return FOREVER_NS
    seconds = float(timeout)
    if math.isnan(seconds) or seconds < 0:
        raise ValueError("timeout must be None or seconds >= 0, not %r" % (timeout,))
    if math.isinf(seconds):
        return FOREVER_NS
    return min(int(round(seconds * 1e9)), FOREVER_NS - 1)


class Owned(object):
    """A rig handle this object releases once: at close() (or release()), at the end of a with block, or
    when collected. A closed object keeps its stale handle, so a later use reaches rig and raises rig's
    own InvalidHandle with rig's message."""

    _release_fn = None

    def __init__(self, raw, keep=None):
        self._raw = raw
        self._keep = keep  # Python objects rig's callbacks reach through this handle
        self._released = raw is None

    @property
    def closed(self):
        """True once close() (or release()) ran."""
        return self._released

    def close(self):
        """Releases the handle; a second call does nothing."""
        if not self._released:
            self._released = True
            type(self)._release_fn(self._raw)

    release = close

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
        self.close()
        return False
