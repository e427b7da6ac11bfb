"""safetensors' Python API over rig's loader: rig.load_file(path, device) -> {name: tensor} and
rig.safe_open(path, framework, device) with keys(), metadata(), get_tensor() and get_slice(), as
safetensors users write them; tensors are typed without a copy (rig._typed).

    import rig
    weights = rig.load_file("model.safetensors", device="cuda:0")   # {name: torch.Tensor}
    with rig.safe_open("model.safetensors", framework="pt", device="cuda:0") as f:
        shard = f.get_slice("lm_head.weight")[rank * rows:(rank + 1) * rows]
    # tensor-parallel over two GPUs: {name: [rank 0's part, rank 1's part]}
    parts = rig.load_file("model.safetensors", device=["cuda:0", "cuda:1"],
                          split={"*down_proj.weight": 1, "*proj.weight": 0})
"""

import json
import operator
import os
import threading

from . import _typed
from ._devices import Device, named_device
from ._load import Format, Loaded, Pool, WeightsFile, _path, _single, load, start_load

SAFETENSORS_HEADER_MAX = 100 << 20  # the format's limit on the header, as rig_load_open enforces it
STAGING_BYTES = 64 << 20  # safe_open's pool: rig's default staging for one load (rig_load.h)


def _device(device, framework):
    """The Device tensors go to: None is "cuda:0", or "cpu" (a memory device) for numpy."""
    if device is None:
        device = "cpu" if framework == "np" else "cuda:0"
    device = named_device(device)
    _typed.check_device(framework, device)
    return device


def _file_and_device(filename, device, framework):
    """load_file's WeightsFile and Device, the device opened on a thread of its own while this one opens the
    file. Each call releases the GIL, so opening cuda:0 (1.5-1.9 ms on an H200) no longer adds to parsing a
    header of a thousand tensors (4-6 ms there): bench/README.md, Python's rows. The file's error comes
    first, as when the two were opened in turn; a Device given needs no thread."""
    if isinstance(device, Device):
        weights = WeightsFile(filename)
        try:
            return weights, _device(device, framework)
        except BaseException:
            weights.close()
            raise
    got = {}

    def open_device():
        try:
            got["device"] = _device(device, framework)
        except BaseException as e:  # raised on the caller's thread, below
            got["error"] = e

    opener = threading.Thread(target=open_device, name="rig.load_file: device", daemon=True)
    opener.start()
    try:
        weights = WeightsFile(filename)
    finally:
        opener.join()
    if "error" in got:
        weights.close()
        raise got["error"]
    return weights, got["device"]


def load_file(filename, device=None, framework="pt", split=None, **options):
    """Every tensor of ``filename`` on ``device`` in one load, as {name: tensor} (a rig.Loaded dict, whose
    .stats are the load's): torch.Tensors (framework "pt"), numpy arrays ("np") or rig.Buffers ("rig"),
    each of the file's dtype and shape over the loaded bytes (no copy). ``device``: a name ("cuda:0",
    "memory:A", "cpu", "vulkan:0"), a rig.Device, an int or a torch.device; a name is opened once per
    process and kept open, so no tensor outlives its device; None is "cuda:0", or "cpu" for numpy.
    ``options`` as rig.load's. Waits until every copy is submitted; a GPU consumer's stream then waits for
    them (DLPack's stream protocol). FileNotFoundError, ValueError for a bad file, TypeError naming a
    tensor whose type the framework lacks (checked before anything loads).
    Tensor-parallel: with ``split`` ({pattern: dim} or [(pattern, dim)], as rig.start_load's) and
    ``device`` a list of devices, every tensor a pattern matches is split along its dim over them, each
    part read from the file once, and the result maps each name to a list with one tensor per device (of
    the part's shape; a tensor no pattern matches whole on each, or where ``rule`` puts it)."""
    framework = _typed.framework(framework)
    if split is not None:
        return _load_split(filename, device, framework, split, options)
    weights, device = _file_and_device(filename, device, framework)
    with weights:
        for t in weights:
            _typed.check_type(t, framework)
        if not _single(device):
            loaded = load(weights, device, **options)
            typer = _typed.Typer(framework)
            result = Loaded((name, typer(buf, weights[name])) for name, buf in loaded.items())
            result.stats = loaded.stats
            return result
        # Each tensor is typed as soon as its own copies are submitted (rig_load_buffer waits for that
        # tensor only, without the GIL), in the order the loader copies them (shard, then offset): the
        # Python work per tensor (a Buffer, a DLPack capsule, the framework's tensor; tens of microseconds)
        # overlaps the load instead of following it, which on a file of a thousand small tensors was a
        # third of the load's time (bench/README.md, Python's rows).
        with start_load(weights, device, **options) as running:
            typed, typer = {}, _typed.Typer(framework)
            for t in sorted(running.tensors, key=lambda t: (t.shard, t.offset)):
                typed[t.index] = typer(running.buffer(t, 0), weights[t.name])
            running.wait()
            result = Loaded((t.name, typed[t.index]) for t in running.tensors)
            result.stats = running.stats
            return result


def _load_split(filename, devices, framework, split, options):
    """load_file with ``split`` over ``devices`` (a list): {name: [typed part per device holding one]}."""
    if devices is None or isinstance(devices, (str, bytes)) or not hasattr(devices, "__iter__"):
        raise TypeError("load_file(split=...): device must be a list of devices to split over, not %r" % (devices,))
    devices = [_device(d, framework) for d in devices]
    with WeightsFile(filename) as weights:
        for t in weights:
            _typed.check_type(t, framework)
        with start_load(weights, devices, split=split, **options) as running:
            running.wait()
            result, typer = Loaded(), _typed.Typer(framework)
            for t in running.tensors:
                parts = []
                for d in range(len(devices)):
                    try:
                        buf = running.buffer(t, d)
                    except ValueError:  # InvalidArgument: not placed on that device (a rule's choice)
                        continue
                    parts.append(typer(buf, running.part(t, d)))
                result[t.name] = parts
            result.stats = running.stats
            return result


class safe_open(object):
    """An open weights file, read tensor by tensor as safetensors.safe_open does: a context manager whose
    get_tensor(name) loads that tensor onto ``device`` and gives it typed for ``framework`` ("pt", "np",
    "rig"; as load_file), and get_slice(name)[...] reads only the range of the first dimension the index
    narrows (rows, or columns after full slices: a slice of the tensor placed by rig_load.h). The file stays open until close() or the end of the ``with`` block."""

    def __init__(self, filename, framework="pt", device=None):
        self._framework = _typed.framework(framework)
        self._path = _path(filename)
        self._file = WeightsFile(self._path)
        try:
            self._device = _device(device, self._framework)
            self._one_file = _one_file(self._path, self._file.format)
        except BaseException:
            self._file.close()
            raise
        self._pool = None  # staging kept across this file's loads (GPUs only), made by the first
        self._loading = threading.Lock()  # a pool serves one load at a time

    def close(self):
        """Closes the file and its staging; tensors already handed out stay valid."""
        self._file.close()
        if self._pool is not None:
            self._pool.close()

    def _load(self, file, tensors=None, slices=None):
        """rig.load of ``tensors`` of ``file`` (``slices`` as start_load's) onto the device, staged through
        one pool for every load of this file: making pinned staging costs more than a small tensor's copy,
        and get_tensor loads one tensor at a time. Memory devices read the file's mapping themselves and
        need none."""
        with self._loading:
            if self._pool is None and self._device.info()["framework"] not in _typed.HOST_FRAMEWORKS:
                self._pool = Pool(self._device, STAGING_BYTES)
            return load(file, self._device, tensors, pools=[self._pool] if self._pool is not None else None,
                        slices=slices)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def keys(self):
        """The tensors' names, sorted (safetensors' order)."""
        return sorted(t.name for t in self._file)

    def offset_keys(self):
        """The tensors' names in the order of their bytes in the file."""
        return [t.name for t in sorted(self._file, key=lambda t: (t.offset, t.name))]

    def metadata(self):
        """The safetensors header's ``__metadata__`` (a dict of str to str), or None where it has none or
        the file is no safetensors file."""
        if self._file.format != Format.SAFETENSORS or not self._one_file:
            return None
        return _safetensors_metadata(self._path)

    def get_tensor(self, name):
        """Tensor ``name`` loaded onto the device, typed for the framework (KeyError if none). Waits until
        its copies are submitted, holding this file's load lock (one load at a time per safe_open)."""
        tensor = self._tensor(name)
        _typed.check_type(tensor, self._framework)
        buf = self._load(self._file, [tensor.index])[tensor.name]
        return _typed.typed(buf, tensor, self._framework)

    def get_slice(self, name):
        """Tensor ``name`` to be indexed as numpy indexes: ``[a:b]``, ``[i]``, ``[:, c:d]``, ``[..., ::2]``;
        only the span of the first dimension the index narrows is read (rows for ``[a:b]``, columns for
        ``[:, c:d]``; KeyError if none)."""
        return Slice(self, self._tensor(name))

    def _tensor(self, name):
        try:
            return self._file[name]
        except KeyError:
            raise KeyError("no tensor %r in %s" % (name, self._path)) from None

    def _part(self, tensor, dim, lo, hi):
        """[lo, hi) along ``dim`` of ``tensor`` loaded alone, as a slice of the placement (rig_load_slice):
        nothing outside it is read, from one file or a checkpoint's shard."""
        shape = list(tensor.shape)
        part = tensor._replace(shape=tuple(shape[:dim] + [hi - lo] + shape[dim + 1:]),
                               length=tensor.length * (hi - lo) // shape[dim])
        buf = self._load(self._file, [tensor.index], slices=[(tensor.index, 0, dim, lo, hi)])[tensor.name]
        return _typed.typed(buf, part, self._framework)

    def __repr__(self):
        return "<rig.safe_open %s framework=%r device=%r%s>" % (
            self._path, self._framework, self._device.name, " closed" if self._file.closed else "")


class Slice(object):
    """A tensor of a safe_open file waiting for its index (safetensors' PySafeSlice)."""

    def __init__(self, opened, tensor):
        self._opened, self._tensor = opened, tensor

    def get_shape(self):
        """The whole tensor's shape, a list."""
        return list(self._tensor.shape)

    def get_dtype(self):
        """The file's name for the tensor's type ("BF16")."""
        return self._tensor.dtype

    def __len__(self):
        if not self._tensor.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._tensor.shape[0]

    def __getitem__(self, index):
        """The tensor's part ``index`` selects, typed for the framework: a view of the rows read. Waits
        as get_tensor."""
        opened, tensor = self._opened, self._tensor
        _typed.check_type(tensor, opened._framework)
        key = index if isinstance(index, tuple) else (index,)
        span = _narrowed(key, tensor)
        if span is None:  # the index keeps every element (or the tensor has none): the whole tensor
            whole, rest = opened.get_tensor(tensor.name), key
        else:
            dim, lo, hi, entry = span
            if entry == slice(0, hi - lo, 1):  # every index read is kept
                entry = slice(None)
            whole, rest = opened._part(tensor, dim, lo, hi), key[:dim] + (entry,) + key[dim + 1:]
        if opened._framework == "rig":
            if all(k == slice(None) or k is Ellipsis for k in rest):
                return whole
            raise TypeError("framework='rig' slices one dimension by a step-1 range ([a:b], [:, a:b]) only, "
                            "not %r: use framework='pt' or 'np' for the rest" % (index,))
        return whole[rest]


def _narrowed(key, tensor):
    """(dim, lo, hi, entry) for the index's first entry that is not a full slice, where it is an int or a
    slice of dimension ``dim``: [lo, hi) along it holds all it selects, ``entry`` is that entry shifted
    onto them. None where the index reads every element (only full slices, an Ellipsis or None before the
    first narrowing entry, an empty tensor)."""
    shape = tensor.shape
    if not shape or tensor.length == 0:
        return None
    dim = 0
    while dim < len(key) and dim < len(shape) and isinstance(key[dim], slice) and key[dim] == slice(None):
        dim += 1
    if dim >= len(key) or dim >= len(shape) or shape[dim] == 0:
        return None
    span = _span(key[dim], shape[dim], tensor.name, dim)
    return None if span is None else (dim,) + span


def _span(first, n, name, dim):
    """(lo, hi, entry) for one index entry over a dimension of ``n``: an int or a slice; None otherwise."""
    if isinstance(first, slice):
        r = range(*first.indices(n))
        if len(r) == 0:
            return 0, 1, slice(0, 0)  # one row read, none kept: the framework's empty result of its shape
        lo, hi = min(r), max(r) + 1
        stop = r.stop - lo
        return lo, hi, slice(r.start - lo, stop if stop >= 0 else None, r.step)
    if first is None or first is Ellipsis or isinstance(first, bool):
        return None
    try:
        i = operator.index(first)
    except TypeError:
        return None  # an array or a list of indices: the framework's own indexing on the whole tensor
    if not -n <= i < n:
        raise IndexError("index %d is out of bounds for dimension %d of %r with size %d" % (i, dim, name, n))
    i %= n
    return i, i + 1, 0


def _one_file(path, format):
    """Whether ``path`` is one weights file itself (its tensors' offsets are offsets in it), not a
    checkpoint of several (a directory, a shards' index) that rig_load_open may take."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        head = f.read(9)
    if format == Format.GGUF:
        return head.startswith(b"GGUF")
    return format == Format.SAFETENSORS and head[8:9] == b"{"


def _safetensors_metadata(path):
    """The header's ``__metadata__``. rig_load.h gives no metadata yet: read here from the file's first
    8 + N bytes (the C parser checked the header when the file was opened); a C call replaces this."""
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        if not 0 < size <= SAFETENSORS_HEADER_MAX:
            raise ValueError("%s: a safetensors header of %d bytes" % (path, size))
        text = f.read(size)
    try:
        header = json.loads(text)
    except ValueError as e:
        raise ValueError("%s: the safetensors header is no JSON: %s" % (path, e)) from None
    meta = header.get("__metadata__") if isinstance(header, dict) else None
    if meta is None:
        return None
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise ValueError("%s: __metadata__ must map str to str (safetensors), not %.80r" % (path, meta))
    return dict(meta)
