"""rig's exceptions: one class per status, all under RigError.

The raw layer (rig._rig) raises these directly: at import, rig hands the classes to the C code, which
picks the class by the failed call's status and fills in rig's own message (rig_last_error, read on the
failing thread in the same C call). Where Python has a matching built-in the class also derives from it,
so ``except TimeoutError`` or ``except ValueError`` catch rig's errors as they would any other.
"""

import errno
import os

from . import _rig


class RigError(Exception):
    """A rig call failed. ``status`` is the rig_status code, ``name`` its name (``"RIG_TIMEOUT"``),
    ``message`` rig's words for this failure."""

    status = -1
    name = "RIG_ERROR"
    message = ""

    def __str__(self):
        return "%s: %s" % (self.name, self.message or (self.args[0] if self.args else ""))


class InvalidArgument(RigError, ValueError):
    """RIG_INVALID_ARGUMENT: a size, range, slot, access, value or pointer is wrong."""


class InvalidHandle(RigError, ValueError):
    """RIG_INVALID_HANDLE: the object was released (or its handle is stale), like I/O on a closed file."""


class Unsupported(RigError):
    """RIG_UNSUPPORTED: the device or its driver cannot do this (a host kernel on a GPU, ...)."""


class Unmappable(RigError):
    """RIG_UNMAPPABLE: a borrow the device cannot map (foreign memory, unaligned host memory)."""


class OutOfMemory(RigError, MemoryError):
    """RIG_OUT_OF_MEMORY: host or device memory exhausted."""


class DeviceLost(RigError):
    """RIG_LOST: the device, or a device the work waits for, is lost."""


class Timeout(RigError, TimeoutError):
    """RIG_TIMEOUT: a wait's timeout passed; nothing changed."""


class Interrupted(RigError, InterruptedError):
    """RIG_INTERRUPTED: a wait was interrupted (rig.interrupt_waits); nothing changed."""


class DriverError(RigError):
    """RIG_DRIVER: a driver call failed without losing the device; the message names the call."""


class NotFound(RigError, LookupError):
    """RIG_NOT_FOUND: no such device, driver or kernel."""


class FileNotFound(NotFound, FileNotFoundError):
    """RIG_NOT_FOUND for a file that does not exist: also a FileNotFoundError (errno ENOENT, filename)."""

    def __str__(self):
        return RigError.__str__(self)


def file_not_found(error, path):
    """The FileNotFound of a NotFound that rig raised for ``path``, with rig's status and message."""
    e = FileNotFound(error.message or str(error))
    e.status, e.name, e.message = error.status, error.name, error.message
    e.errno, e.strerror, e.filename = errno.ENOENT, os.strerror(errno.ENOENT), path
    return e


class Busy(RigError):
    """RIG_BUSY: the resource is in use (a range registered by another, a live export)."""


BY_STATUS = {
    _rig.RIG_INVALID_ARGUMENT: InvalidArgument,
    _rig.RIG_INVALID_HANDLE: InvalidHandle,
    _rig.RIG_UNSUPPORTED: Unsupported,
    _rig.RIG_UNMAPPABLE: Unmappable,
    _rig.RIG_OUT_OF_MEMORY: OutOfMemory,
    _rig.RIG_LOST: DeviceLost,
    _rig.RIG_TIMEOUT: Timeout,
    _rig.RIG_INTERRUPTED: Interrupted,
    _rig.RIG_DRIVER: DriverError,
    _rig.RIG_NOT_FOUND: NotFound,
    _rig.RIG_BUSY: Busy,
}

# The raw layer raises these from now on (a status missing from the table raises RigError itself).
_rig.rig_py_set_errors(RigError, BY_STATUS)


def status_name(status):
    """rig's name of a status code (``"RIG_TIMEOUT"``)."""
    return _rig.rig_status_name(int(status))
