"""rig: order the work of several devices by the memory it uses.

A Python layer over librig (the C library; its raw SWIG wrapping is the private module rig._rig)::

    import rig
    a, b = rig.memory_device("A"), rig.memory_device("B")
    src = rig.Buffer.wrap(b"hello, world")
    x, y = rig.Buffer.create(a, 12), rig.Buffer.create(b, 12)
    rig.submit(a, [rig.copy(0, 1)], [(src.borrow(a), rig.READ), (x, rig.WRITE)])
    rig.submit(b, [rig.copy(0, 1)], [(x.borrow(b), rig.READ), (y, rig.WRITE)])
    print(y.to_bytes())        # b'hello, world': no event, fence or wait written

Every object is a context manager and releases its handle at close(), at the end of a ``with`` block or
when collected. Failures raise a subclass of RigError per status, carrying rig's own message (Timeout is
also a TimeoutError, InvalidArgument a ValueError, OutOfMemory a MemoryError, ...). Timeouts are seconds
(float; None waits forever). Host-addressable buffers support the buffer protocol (memoryview, numpy).
The ordering model: docs/ordering-model.md in rig's sources.

Model weights as safetensors users load them: ``rig.load_file("model.safetensors", device="cuda:0")``
gives {name: torch.Tensor} of the file's dtypes and shapes without a copy; ``rig.safe_open`` reads them
tensor by tensor and slice by slice (rig._safetensors).
"""

from . import _rig
from ._errors import (Busy, DeviceLost, DriverError, FileNotFound, InvalidArgument, InvalidHandle, Interrupted,
                      NotFound, OutOfMemory, RigError, Timeout, Unmappable, Unsupported, status_name)
from ._enums import Access, DeviceKind, Fact, Memory, ModuleFormat, Refusal, Status, VerdictKind
from ._devices import Device, device_list, host, interrupt_waits, memory_device, open_device, wait_point
from ._buffers import WHOLE, Buffer, Module
from ._dlpack import ArrayView
from ._point import Point
from ._work import Run, Submission, copy, fill, host_kernel, launch, submit, submit_many
from ._log import log_to_logging, log_to_stderr
from ._load import IO, Format, Load, Loaded, Path, Pool, Rule, Shard, Tensor, WeightsFile, load, start_load
from ._safetensors import Slice, load_file, safe_open
from ._keep import Attachment, attach
from ._verdicts import (Verdict, host_is_registered, host_register, host_unregister, probe, probe_with,
                        static_verdict, static_verdict_for)

__version__ = _rig.rig_version_string()
"""The version of the librig this module runs on (they are built and shipped together)."""

Error = RigError  # the name earlier versions of the binding used

READ = Access.READ
WRITE = Access.WRITE
READ_WRITE = Access.READ_WRITE


def version():
    """librig's run-time version string, as __version__."""
    return _rig.rig_version_string()


__all__ = [
    "__version__", "version",
    # errors
    "RigError", "Error", "InvalidArgument", "InvalidHandle", "Unsupported", "Unmappable", "OutOfMemory",
    "DeviceLost", "Timeout", "Interrupted", "DriverError", "NotFound", "FileNotFound", "Busy", "status_name",
    # enums
    "Status", "Access", "Memory", "DeviceKind", "ModuleFormat", "VerdictKind", "Refusal", "Fact",
    "READ", "WRITE", "READ_WRITE", "WHOLE",
    # devices
    "Device", "host", "memory_device", "open_device", "device_list", "wait_point", "interrupt_waits",
    "Point",
    # buffers and work
    "Buffer", "ArrayView", "Module", "Submission", "Run", "copy", "fill", "host_kernel", "launch", "submit",
    "submit_many",
    # mapped registration
    "Verdict", "static_verdict", "static_verdict_for", "probe", "probe_with", "host_register",
    "host_unregister", "host_is_registered",
    # the loader
    "load", "start_load", "WeightsFile", "Tensor", "Shard", "Load", "Loaded", "Pool", "Format", "Path", "IO", "Rule",
    # typed tensors, as safetensors' API
    "load_file", "safe_open", "Slice",
    # a keeper's tensors (rig keep)
    "attach", "Attachment",
    # diagnostics
    "log_to_logging", "log_to_stderr",
]
