"""Typed tensors: a loaded tensor's Buffer seen as a torch.Tensor or a numpy array of the file's dtype and
shape without a copy, through DLPack (rig._dlpack: the consumer's stream waits for the load's copies), or
left a rig.Buffer (framework "rig")."""

import importlib

from . import _rig
from ._dlpack import DLPACK_CPU, ArrayView, order

FRAMEWORKS = ("pt", "np", "rig")

# rig_dtype -> (bytes per element, numpy's dtype, torch's dtype). A numpy name "ml_dtypes.X" is ml_dtypes'
# extension type (numpy has no bfloat16 or float8 of its own).
TYPES = {
    _rig.RIG_DTYPE_BOOL: (1, "bool", "bool"),
    _rig.RIG_DTYPE_U8: (1, "uint8", "uint8"),
    _rig.RIG_DTYPE_I8: (1, "int8", "int8"),
    _rig.RIG_DTYPE_F8_E4M3: (1, "ml_dtypes.float8_e4m3fn", "float8_e4m3fn"),
    _rig.RIG_DTYPE_F8_E5M2: (1, "ml_dtypes.float8_e5m2", "float8_e5m2"),
    _rig.RIG_DTYPE_U16: (2, "uint16", "uint16"),
    _rig.RIG_DTYPE_I16: (2, "int16", "int16"),
    _rig.RIG_DTYPE_F16: (2, "float16", "float16"),
    _rig.RIG_DTYPE_BF16: (2, "ml_dtypes.bfloat16", "bfloat16"),
    _rig.RIG_DTYPE_U32: (4, "uint32", "uint32"),
    _rig.RIG_DTYPE_I32: (4, "int32", "int32"),
    _rig.RIG_DTYPE_F32: (4, "float32", "float32"),
    _rig.RIG_DTYPE_U64: (8, "uint64", "uint64"),
    _rig.RIG_DTYPE_I64: (8, "int64", "int64"),
    _rig.RIG_DTYPE_F64: (8, "float64", "float64"),
}

# What crosses DLPack for each element width: a type every framework's from_dlpack reads (DLPack has no
# code for float8 and older torch reads no unsigned type but uint8); the framework's view() then retypes
# the same bytes, and reshape() gives the file's shape: both views of the one allocation.
CARRIER = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}

# The types DLPack itself names, rig_dtype -> (type code, bits): such a tensor crosses to torch already typed
# and shaped, one framework call instead of three (import, view, reshape), which was most of an attach's
# Python time a tensor. Float8 and the wider unsigned types (which older torch reads through no DLPack code)
# cross as their CARRIER instead, as does bool (rig_buffer_to_dlpack takes the codes up to kDLComplex) and
# any type the running torch refuses (_CARRIED, learnt once).
DLPACK_TYPES = {
    _rig.RIG_DTYPE_U8: (1, 8), _rig.RIG_DTYPE_I8: (0, 8),
    _rig.RIG_DTYPE_I16: (0, 16), _rig.RIG_DTYPE_F16: (2, 16), _rig.RIG_DTYPE_BF16: (4, 16),
    _rig.RIG_DTYPE_I32: (0, 32), _rig.RIG_DTYPE_F32: (2, 32), _rig.RIG_DTYPE_I64: (0, 64),
    _rig.RIG_DTYPE_F64: (2, 64),
}
_CARRIED = set()

# rig_device_info's framework names whose buffers DLPack sees: host memory (kDLCPU) and GPUs.
HOST_FRAMEWORKS = ("host", "memory")
DLPACK_FRAMEWORKS = HOST_FRAMEWORKS + ("CUDA", "HIP")


def framework(name):
    """``name`` checked as a framework: "pt", "np" or "rig" (ValueError, TypeError naming it otherwise;
    ImportError where its module is not importable)."""
    if not isinstance(name, str):
        raise TypeError("framework: a str (one of %s), not %r" % (", ".join(FRAMEWORKS), name))
    if name not in FRAMEWORKS:
        raise ValueError("framework must be one of %s, not %r" % (", ".join(repr(f) for f in FRAMEWORKS), name))
    if name != "rig":
        _module(name)
    return name


def check_device(framework, device):
    """TypeError before anything loads where ``framework`` cannot see ``device``'s memory: DLPack has no
    Vulkan device, numpy reads host memory only."""
    if framework == "rig":
        return
    kind = device.info()["framework"]
    if kind not in DLPACK_FRAMEWORKS:
        raise TypeError("framework=%r takes tensors through DLPack, which %s devices (%r) have not: use "
                        "framework='rig' for rig.Buffers" % (framework, kind, device.name))
    if framework == "np" and kind not in HOST_FRAMEWORKS:
        raise TypeError("framework='np' reads host memory and %r is a %s device: use device='cpu' (a memory "
                        "device) or framework='pt'" % (device.name, kind))


def check_type(tensor, framework):
    """TypeError where ``framework`` has no type for ``tensor``, as typed() would say, before a byte is
    read."""
    if framework != "rig":
        _dtype(tensor, framework)


def typed(buf, tensor, framework):
    """The Buffer ``buf`` holding all of ``tensor`` (a rig.Tensor) as ``framework`` wants it: itself for
    "rig", else a tensor or array of the file's dtype and shape over the same bytes. TypeError naming the
    tensor and its type where the framework has no such type (a ggml block type, bf16 in numpy without
    ml_dtypes, float8 or an unsigned type in a torch without them)."""
    return Typer(framework)(buf, tensor)


class Typer:
    """typed() for the tensors of one call (an attach, a load): torch's current stream on each device is
    looked up once for them all, which is right while no user code runs between them."""

    def __init__(self, framework):
        self.framework = framework
        self._streams = {}

    def __call__(self, buf, tensor):
        framework = self.framework
        if framework == "rig":
            return buf
        dtype = _dtype(tensor, framework)
        if framework == "pt" and tensor.rig_dtype in DLPACK_TYPES and tensor.rig_dtype not in _CARRIED:
            found = self._shaped(buf, tensor)
            if found is not None:
                return found
        carrier = ArrayView(buf, CARRIER[TYPES[tensor.rig_dtype][0]])
        return _module(framework).from_dlpack(carrier).view(dtype).reshape(tensor.shape)

    def _shaped(self, buf, tensor):
        """``tensor`` as torch sees a capsule of its own type and shape, ordered as __dlpack__ orders it
        (the consumer's stream waits for rig's last write; a host buffer waits here); None where this
        torch has no such DLPack type (then the carrier's path types it, as it will from now on)."""
        torch = _module("pt")
        device_type, device_id = _rig.rig_py_dlpack_device(buf._raw)
        native = None
        if device_type != DLPACK_CPU:
            native = self._streams.get(device_id)
            if native is None:  # what torch.from_dlpack would pass to __dlpack__ (1, the legacy default: 0)
                native = self._streams[device_id] = torch.cuda.current_stream(device_id).cuda_stream
        order(buf, device_type, native)
        code, bits = DLPACK_TYPES[tensor.rig_dtype]
        capsule = _rig.rig_py_dlpack_capsule_shaped(buf._raw, code, bits, tensor.shape)
        try:
            return torch.from_dlpack(capsule)
        except (BufferError, RuntimeError, TypeError):
            _CARRIED.add(tensor.rig_dtype)
            return None


# Each answer of _dtype and _module, kept: a checkpoint of 1461 tensors asked them 4383 times, and the
# import machinery's lookups were a third of an attach's Python time. Failures are not kept (they raise).
_DTYPES = {}
_MODULES = {}


def _dtype(tensor, framework):
    """``framework``'s dtype for ``tensor``, or TypeError naming both."""
    key = (tensor.rig_dtype, framework)
    found = _DTYPES.get(key)
    if found is None:
        found = _DTYPES[key] = _resolve_dtype(tensor, framework)
    return found


def _resolve_dtype(tensor, framework):
    try:
        _, np_name, pt_name = TYPES[tensor.rig_dtype]
    except KeyError:
        raise TypeError("tensor %r is %s, a block-quantized ggml type no framework types: load it with "
                        "framework='rig' for its bytes" % (tensor.name, tensor.dtype)) from None
    if framework == "pt":
        torch = _module("pt")
        dtype = getattr(torch, pt_name, None)
        if dtype is None:
            raise TypeError("tensor %r is %s: torch %s has no torch.%s (framework='rig' gives its bytes)" % (
                tensor.name, tensor.dtype, torch.__version__, pt_name))
        return dtype
    numpy = _module("np")
    if not np_name.startswith("ml_dtypes."):
        return numpy.dtype(np_name)
    name = np_name[len("ml_dtypes."):]
    try:
        ml_dtypes = importlib.import_module("ml_dtypes")
    except ImportError:
        raise TypeError("tensor %r is %s, which numpy has no dtype for: install ml_dtypes (it adds %s), or "
                        "use framework='pt' or 'rig'" % (tensor.name, tensor.dtype, name)) from None
    return numpy.dtype(getattr(ml_dtypes, name))


def _module(framework):
    """torch for "pt", numpy for "np"; ImportError saying what to do where it is not importable."""
    found = _MODULES.get(framework)
    if found is not None:
        return found
    name = {"pt": "torch", "np": "numpy"}[framework]
    try:
        found = _MODULES[framework] = importlib.import_module(name)
        return found
    except ImportError:
        raise ImportError("framework=%r needs %s, which this Python cannot import: install it, or use "
                          "another framework ('pt', 'np' or 'rig')" % (framework, name)) from None
