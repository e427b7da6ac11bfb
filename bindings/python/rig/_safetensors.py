"""safetensors' Python API over rig's loader: rig.load_file(path, device) -> {name: tensor} and
rig.safe_open(path, framework, device) with keys(), metadata(), get_tensor() and get_slice(), as
safetensors users write them; tensors are typed without a copy (rig._typed).

    import rig
    weights = rig.load_file("model.safetensors", device="cuda:0")   # {name: torch.Tensor}
    with rig.safe_open("model.safetensors", framework="pt", device="cuda:0") as f:
        shard = f.get_slice("lm_head.weight")[rank * rows:(rank + 1) * rows]
"""

import json
import operator
import os
import threading

from . import _typed
from ._devices import named_device
from ._load import Format, Loaded, Pool, WeightsFile, _path, load

SAFETENSORS_HEADER_MAX = 100 << 20  # the format's limit on the header, as rig_load_open enforces it
STAGING_BYTES = 64 << 20  # safe_open's pool: rig's default staging for one load (rig_load.h)


def _device(device, framework):
    """The Device tensors go to: None is "cuda:0", or "cpu" (a memory device) for numpy."""
    if device is None:
        device = "cpu" if framework == "np" else "cuda:0"
    device = named_device(device)
    _typed.check_device(framework, device)
    return device


def load_file(filename, device=None, framework="pt", **options):
    """Every tensor of ``filename`` on ``device`` in one load, as {name: tensor} (a rig.Loaded dict, whose
    .stats are the load's): torch.Tensors (framework "pt"), numpy arrays ("np") or rig.Buffers ("rig"),
    each of the file's dtype and shape over the loaded bytes (no copy). ``device``: a name ("cuda:0",
    "memory:A", "cpu", "vulkan:0"), a rig.Device, an int or a torch.device; a name is opened once per
    process and kept open, so no tensor outlives its device; None is "cuda:0", or "cpu" for numpy.
    ``options`` as rig.load's. Waits until every copy is submitted; a GPU consumer's stream then waits for
    them (DLPack's stream protocol). FileNotFoundError, ValueError for a bad file, TypeError naming a
    tensor whose type the framework lacks (checked before anything loads)."""
    framework = _typed.framework(framework)
    with WeightsFile(filename) as weights:
        device = _device(device, framework)
        for t in weights:
            _typed.check_type(t, framework)
        loaded = load(weights, device, **options)
        result = Loaded((name, _typed.typed(buf, weights[name], framework)) for name, buf in loaded.items())
        result.stats = loaded.stats
        return result


class safe_open(object):
    """An open weights file, read tensor by tensor as safetensors.safe_open does: a context manager whose
    get_tensor(name) loads that tensor onto ``device`` and gives it typed for ``framework`` ("pt", "np",
    "rig"; as load_file), and get_slice(name)[...] reads only the rows of the first dimension the index
    selects. The file stays open until close() or the end of the ``with`` block."""

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

    def _load(self, file, tensors=None):
        """rig.load of ``tensors`` of ``file`` onto the device, staged through one pool for every load of
        this file: making pinned staging costs more than a small tensor's copy, and get_tensor loads one
        tensor at a time. Memory devices read the file's mapping themselves and need none."""
        with self._loading:
            if self._pool is None and self._device.info()["framework"] not in _typed.HOST_FRAMEWORKS:
                self._pool = Pool(self._device, STAGING_BYTES)
            return load(file, self._device, tensors, pools=[self._pool] if self._pool is not None else None)

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
        only the rows of the first dimension the index selects are read (KeyError if none)."""
        return Slice(self, self._tensor(name))

    def _tensor(self, name):
        try:
            return self._file[name]
        except KeyError:
            raise KeyError("no tensor %r in %s" % (name, self._path)) from None

    def _rows(self, tensor, lo, hi):
        """Rows [lo, hi) of ``tensor``'s first dimension loaded alone: the file's byte range of those rows
        opened as a raw range (rig_load_open_raw), so nothing outside them is read."""
        row = tensor.length // tensor.shape[0]
        part = tensor._replace(shape=(hi - lo,) + tuple(tensor.shape[1:]), offset=tensor.offset + lo * row,
                               length=(hi - lo) * row)
        with WeightsFile(self._path, ranges=[(tensor.name, part.offset, part.length)]) as rows:
            buf = self._load(rows)[tensor.name]
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
        # a checkpoint of several files: Tensor.offset names no file, so the whole tensor is loaded and
        # sliced until the C placement gives slices
        rows = _first_rows(key, tensor) if opened._one_file else None
        if rows is None:  # the index keeps every row (or the tensor has none): the whole tensor
            whole, rest = opened.get_tensor(tensor.name), key
        else:
            lo, hi, first = rows
            if first == slice(0, hi - lo, 1):  # every row read is kept
                first = slice(None)
            whole, rest = opened._rows(tensor, lo, hi), (first,) + key[1:]
        if opened._framework == "rig":
            if all(k == slice(None) or k is Ellipsis for k in rest):
                return whole
            raise TypeError("framework='rig' slices rows of the first dimension ([a:b]) only, not %r: use "
                            "framework='pt' or 'np' for the rest" % (index,))
        return whole[rest]


def _first_rows(key, tensor):
    """(lo, hi, first) where the index's first entry is an int or a slice selecting rows of the first
    dimension: rows [lo, hi) hold all it selects, ``first`` is that entry shifted onto them. None where
    the index reads every row (Ellipsis, None first, no rows or empty rows)."""
    shape = tensor.shape
    if not shape or not key or shape[0] == 0 or tensor.length == 0:
        return None
    n, first = shape[0], key[0]
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
        raise IndexError("index %d is out of bounds for dimension 0 of %r with size %d" % (i, tensor.name, n))
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
