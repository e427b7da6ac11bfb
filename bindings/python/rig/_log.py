"""rig's diagnostics in Python's ``logging``.

librig says its diagnostics (RIG_LOAD_TRACE=1's milestones, Vulkan validation messages) on stderr unless
a program names a callback (rig_set_log in rig.h). ``log_to_logging()`` names one that hands each line to a
``logging.Logger`` ("rig" by default) at the matching level; ``log_to_stderr()`` restores the default. The
environment variables still decide what is said at all (docs/environment.md).

The callback is reached through ctypes rather than SWIG: rig calls it on any thread (a load's thread,
a driver's), and a ctypes callback takes the GIL for itself there.
"""

import atexit
import ctypes
import logging

from . import _rig

# rig_log_level's pinned values, and the logging level each becomes
DEBUG, INFO, WARNING, ERROR = 0, 1, 2, 3
_TO_LOGGING = {DEBUG: logging.DEBUG, INFO: logging.INFO, WARNING: logging.WARNING, ERROR: logging.ERROR}

_LogFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)

# librig as the extension module loaded it: a handle to the module also finds the symbols of what it links
_librig = ctypes.CDLL(_rig.__file__)
_set_log = _librig.rig_set_log
_set_log.argtypes = [_LogFn, ctypes.c_void_p, ctypes.c_int]
_set_log.restype = ctypes.c_int

# Every callback ever handed to rig stays referenced: a line said on another thread as the sink changes
# may still reach the previous one (rig.h: rig_set_log).
_kept = []
_restore_registered = False


def _rig_level(level):
    """The least rig level a logging level lets through."""
    if level <= logging.DEBUG:
        return DEBUG
    if level <= logging.INFO:
        return INFO
    if level <= logging.WARNING:
        return WARNING
    return ERROR


def _set(fn, min_level):
    status = _set_log(fn, None, min_level)
    if status != 0:
        from ._errors import RigError  # a bad level cannot come from here; say so loudly if it does
        raise RigError("rig_set_log answered %s: %s" % (_rig.rig_status_name(status), _rig.rig_last_error()))


def log_to_logging(logger=None, level=logging.DEBUG):
    """Sends librig's diagnostics of ``level`` or above to ``logger`` (a Logger or a name; default "rig").

    Each message is one line without its newline, logged at DEBUG (traces), WARNING or ERROR from the thread
    rig said it on. Until the interpreter exits: the default (stderr) comes back at exit, before the
    interpreter goes, since rig may still say something from an exit handler.
    """
    global _restore_registered
    if logger is None or isinstance(logger, str):
        logger = logging.getLogger(logger or "rig")

    def hear(user, rig_level, message):
        try:
            logger.log(_TO_LOGGING.get(rig_level, logging.ERROR), "%s", message.decode("utf-8", "replace"))
        except Exception:  # noqa: BLE001 - an exception must not cross back into C
            pass

    fn = _LogFn(hear)
    _kept.append(fn)
    _set(fn, _rig_level(level))
    if not _restore_registered:
        atexit.register(log_to_stderr)
        _restore_registered = True


def log_to_stderr(level=logging.DEBUG):
    """Restores librig's default: each diagnostic of ``level`` or above as a line on stderr."""
    _set(_LogFn(), _rig_level(level))
