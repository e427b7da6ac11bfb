"""Attaching to a keeper (rig_keep.h): the tensors a `rig keep` process holds, mapped into this one.

    import rig
    weights = rig.attach("/run/user/1000/model.sock", framework="np")   # {name: numpy.ndarray}

Each tensor comes as the keeper sends it (rig_attachment_get waits for that tensor only). The arrays are
read-only unless the keeper runs with --writable (its memory is every client's). docs/keep.md says what a
keeper is for and who may attach.
"""

from . import _rig
from ._buffers import Buffer
from ._devices import named_device
from ._load import Tensor
from ._owned import Owned
from ._typed import Typer, check_device, check_type, framework as checked_framework

# rig_dtype -> the name a safetensors file gives it, for Tensor.dtype (the keeper sends rig's dtype).
_DTYPE_NAMES = {
    _rig.RIG_DTYPE_U8: "U8", _rig.RIG_DTYPE_I8: "I8", _rig.RIG_DTYPE_BOOL: "BOOL",
    _rig.RIG_DTYPE_F8_E4M3: "F8_E4M3", _rig.RIG_DTYPE_F8_E5M2: "F8_E5M2", _rig.RIG_DTYPE_U16: "U16",
    _rig.RIG_DTYPE_I16: "I16", _rig.RIG_DTYPE_F16: "F16", _rig.RIG_DTYPE_BF16: "BF16",
    _rig.RIG_DTYPE_U32: "U32", _rig.RIG_DTYPE_I32: "I32", _rig.RIG_DTYPE_F32: "F32",
    _rig.RIG_DTYPE_U64: "U64", _rig.RIG_DTYPE_I64: "I64", _rig.RIG_DTYPE_F64: "F64",
    _rig.RIG_DTYPE_GGML: "GGML",
}


class Attachment(Owned):
    """One connection to a keeper (rig_attach): its tensors by name, each a rig.Buffer of ``device``."""

    _release_fn = staticmethod(_rig.rig_attachment_release)

    def __init__(self, path, device="cpu"):
        self.device = named_device(device)
        Owned.__init__(self, _rig.rig_attach(path, self.device._raw), keep=self.device)
        count = _rig.rig_attachment_count(self._raw)
        self.tensors = []
        for i in range(count):
            name, dtype, ggml, shape, length, _, _ = _rig.rig_py_attachment_get(self._raw, i, 0)
            self.tensors.append(Tensor(i, name, _DTYPE_NAMES.get(dtype, "?"), shape, 0, length, ggml, dtype))
        self._index = {t.name: t.index for t in self.tensors}

    def buffer(self, tensor):
        """``tensor`` (a name or an index) as a new rig.Buffer, once the keeper sent it; and whether the
        keeper lets it be written. KeyError for a name the keeper does not serve."""
        index = self._index[tensor] if isinstance(tensor, str) else tensor
        *_, writable, raw = _rig.rig_py_attachment_get(self._raw, index, 1)
        buf = Buffer(raw, readonly=not writable, device=self.device)
        # The connection lives while a tensor does: a keeper frees a replaced generation's GPU memory
        # once its connections let go, and IPC memory has no pages of its own here.
        buf._attachment = self
        return buf, writable


def attach(path, framework="np", device="cpu"):
    """{name: tensor} of every tensor the keeper at ``path`` serves, as ``framework`` wants it: "np"
    numpy arrays, "pt" torch tensors (through DLPack) or "rig" rig.Buffers, of the file's dtypes and
    shapes over the keeper's memory, without a copy. ``device``: where this process sees them ("cpu", a
    memory device, by default; "cuda:0" for a keeper on that GPU; "vulkan:0" with framework "rig", which
    DLPack cannot carry). numpy arrays are read-only unless the keeper allows writes (torch has no
    read-only tensors: do not write through them). Waits for every tensor the keeper still loads. rig's
    NotFound where no keeper listens or it holds nothing on ``device`` (the message names where it does),
    Unsupported where it refuses this process; TypeError where ``framework`` has no type for a tensor
    (before any is mapped)."""
    framework = checked_framework(framework)
    a = Attachment(path, device)
    check_device(framework, a.device)
    for t in a.tensors:
        check_type(t, framework)
    result, typer = {}, Typer(framework)
    for t in a.tensors:
        buf, writable = a.buffer(t.index)
        value = typer(buf, t)
        if framework == "np" and not writable:
            value.flags.writeable = False
        result[t.name] = value
    return result
