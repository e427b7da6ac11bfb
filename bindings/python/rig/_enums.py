"""rig's C enums as Python IntEnums (the raw layer takes and returns plain ints; these compare equal)."""

import enum

from . import _rig


class Status(enum.IntEnum):
    """rig_status: what every rig call returns (non-OK ones raise the matching RigError subclass)."""
    OK = _rig.RIG_OK
    INVALID_ARGUMENT = _rig.RIG_INVALID_ARGUMENT
    INVALID_HANDLE = _rig.RIG_INVALID_HANDLE
    UNSUPPORTED = _rig.RIG_UNSUPPORTED
    UNMAPPABLE = _rig.RIG_UNMAPPABLE
    OUT_OF_MEMORY = _rig.RIG_OUT_OF_MEMORY
    LOST = _rig.RIG_LOST
    TIMEOUT = _rig.RIG_TIMEOUT
    INTERRUPTED = _rig.RIG_INTERRUPTED
    DRIVER = _rig.RIG_DRIVER
    NOT_FOUND = _rig.RIG_NOT_FOUND
    BUSY = _rig.RIG_BUSY


class Access(enum.IntFlag):
    """What a submission's slot (or a registration) does to a buffer's bytes."""
    READ = _rig.RIG_ACCESS_READ
    WRITE = _rig.RIG_ACCESS_WRITE
    READ_WRITE = _rig.RIG_ACCESS_READ_WRITE


class Memory(enum.IntEnum):
    """Where Buffer.create puts an allocation."""
    DEVICE = _rig.RIG_MEMORY_DEVICE
    PINNED = _rig.RIG_MEMORY_PINNED
    MAPPED = _rig.RIG_MEMORY_MAPPED


class DeviceKind(enum.IntEnum):
    """What a device is: the host, a memory device, a driver's GPU or CPU device."""
    HOST = _rig.RIG_DEVICE_HOST
    MEMORY = _rig.RIG_DEVICE_MEMORY
    GPU = _rig.RIG_DEVICE_GPU
    CPU = _rig.RIG_DEVICE_CPU


class ModuleFormat(enum.IntEnum):
    """The format of device code Module.load takes."""
    PTX = _rig.RIG_MODULE_PTX
    CUBIN = _rig.RIG_MODULE_CUBIN
    SPIRV = _rig.RIG_MODULE_SPIRV
    HIP_CODE_OBJECT = _rig.RIG_MODULE_HIP_CODE_OBJECT


class VerdictKind(enum.IntEnum):
    """What mapped registration answers for a device (see Verdict)."""
    USABLE = _rig.RIG_VERDICT_USABLE
    NOT_NEEDED = _rig.RIG_VERDICT_NOT_NEEDED
    REFUSED = _rig.RIG_VERDICT_REFUSED
    TOO_SLOW = _rig.RIG_VERDICT_TOO_SLOW
    INCONCLUSIVE = _rig.RIG_VERDICT_INCONCLUSIVE
    STILL_REGISTERED = _rig.RIG_VERDICT_STILL_REGISTERED


class Refusal(enum.IntEnum):
    """Why a Refused verdict refuses."""
    NONE = _rig.RIG_REFUSAL_NONE
    INTEGRATED_GPU = _rig.RIG_REFUSAL_INTEGRATED_GPU
    DEVICE_KIND_UNKNOWN = _rig.RIG_REFUSAL_DEVICE_KIND_UNKNOWN
    KERNEL_HAZARD = _rig.RIG_REFUSAL_KERNEL_HAZARD
    NOT_MEASURED = _rig.RIG_REFUSAL_NOT_MEASURED
    WRONG_BYTES = _rig.RIG_REFUSAL_WRONG_BYTES


class Fact(enum.IntEnum):
    """A question static_verdict_for's facts callable answers (1 yes, 0 no, -1 unknown)."""
    INTEGRATED = _rig.RIG_FACT_INTEGRATED
    PAGEABLE_USES_HOST_PAGE_TABLES = _rig.RIG_FACT_PAGEABLE_USES_HOST_PAGE_TABLES
