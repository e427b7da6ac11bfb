"""The loader (rig_load.h): model weights from a file onto devices, each tensor ordered by its own stamps.

    import rig
    gpu = rig.open_device("cuda:0")
    weights = rig.load("model.safetensors", gpu)          # {name: rig.Buffer}
    print(weights.stats["path"], weights.stats["seconds"])

rig.load waits until every copy is submitted (not until the device finished copying: a submit that reads
a tensor follows the copy of its own chunk through the stamps). start_load returns at once; its
Load.buffer(name) hands a tensor out as soon as its own copies are submitted, while later chunks are
still being read, so compute can start on the first tensor. docs/load.md says how each path works.
"""

import enum
import os
from typing import NamedTuple

from . import _rig
from ._buffers import Buffer
from ._devices import Device, named_device
from ._errors import NotFound, file_not_found
from ._owned import Owned


class Format(enum.IntEnum):
    """A weights file's format (rig_load_format); AUTO decides by the first bytes."""
    AUTO = _rig.RIG_LOAD_FORMAT_AUTO
    SAFETENSORS = _rig.RIG_LOAD_FORMAT_SAFETENSORS
    GGUF = _rig.RIG_LOAD_FORMAT_GGUF
    RAW = _rig.RIG_LOAD_FORMAT_RAW


class Path(enum.IntEnum):
    """How bytes travel from the file to a device (rig_load_path)."""
    AUTO = _rig.RIG_LOAD_PATH_AUTO
    STAGED = _rig.RIG_LOAD_PATH_STAGED
    REGISTERED = _rig.RIG_LOAD_PATH_REGISTERED
    DIRECT = _rig.RIG_LOAD_PATH_DIRECT


class IO(enum.IntEnum):
    """How the staged path reads the file (rig_load_io)."""
    AUTO = _rig.RIG_LOAD_IO_AUTO
    BUFFERED = _rig.RIG_LOAD_IO_BUFFERED
    DIRECT = _rig.RIG_LOAD_IO_DIRECT


class Rule(enum.IntEnum):
    """Which tensor goes to which of several devices (rig_load_rule)."""
    EACH = _rig.RIG_LOAD_RULE_EACH
    BY_LAYER = _rig.RIG_LOAD_RULE_BY_LAYER
    MASKS = _rig.RIG_LOAD_RULE_MASKS


class Tensor(NamedTuple):
    """One tensor of a weights file: dtype is the file's own name for its type ("BF16", "Q4_K"), rig_dtype
    rig's (rig_dtype: RIG_DTYPE_BF16, RIG_DTYPE_GGML for a ggml block type); offset is absolute in its
    file, the checkpoint's shard ``shard`` (an index into WeightsFile.shards; 0 for a single file)."""
    index: int
    name: str
    dtype: str
    shape: tuple
    offset: int
    length: int
    ggml_type: int
    rig_dtype: int = 0
    shard: int = 0


class Shard(NamedTuple):
    """One file of a checkpoint (rig_load_shard_get): its path as rig opened it and its size then."""
    path: str
    bytes: int


def _enum(cls, value):
    """An enum member from a member, its int, or its name in any case ("staged", "by_layer")."""
    if isinstance(value, str):
        try:
            return cls[value.upper()]
        except KeyError:
            raise ValueError("%s must be one of %s, not %r" % (
                cls.__name__, ", ".join(m.name.lower() for m in cls), value)) from None
    return cls(value)


def _path(path):
    """A str, bytes or os.PathLike path as the str rig's calls take (str() of bytes would be "b'...'");
    TypeError naming anything else."""
    try:
        return os.fsdecode(os.fspath(path))
    except TypeError:
        raise TypeError("path: a str, bytes or os.PathLike, not %s" % type(path).__name__) from None


def _single(devices):
    """Whether start_load's ``devices`` is one device (a Device or a name), not a list of them."""
    return isinstance(devices, (Device, str))


def _devices(devices):
    """start_load's devices as a list of Devices: each a Device or a name, opened once per process and
    kept (named_device); a name is one device, never iterated into its letters."""
    if _single(devices):
        return [named_device(devices)]
    if isinstance(devices, bytes):
        raise TypeError("devices: a rig.Device, a device's name (str) or a list of them, not bytes %r" % (devices,))
    devices = list(devices)
    for d in devices:
        if not isinstance(d, (Device, str)):
            raise TypeError("devices: a rig.Device, a device's name or a list of them, not %r" % (d,))
    return [named_device(d) for d in devices]


class WeightsFile(Owned):
    """An open weights file and its tensor table (rig_load_open). The tensors' names and shapes are read
    from its header once; the file stays open until close() and every load of it ended."""

    _release_fn = staticmethod(_rig.rig_load_file_release)

    def __init__(self, path, format=Format.AUTO, ranges=None):
        """Opens ``path`` (safetensors or GGUF by its first bytes, or as ``format`` says): one file, a sharded
        safetensors checkpoint by its ``*.index.json`` or the directory holding it, or the first file of a
        split GGUF set, as one tensor table. With ``ranges`` (a list of (name, offset, length)) any file is
        opened with those byte ranges as U8 tensors."""
        path = _path(path)
        try:
            if ranges is not None:
                raw = _rig.rig_py_load_open_raw(path, list(ranges))
            else:
                raw = _rig.rig_load_open(path, int(_enum(Format, format)))
        except NotFound as e:  # rig_load_open's NOT_FOUND: no such file
            raise file_not_found(e, path) from None
        Owned.__init__(self, raw)
        self.tensors = [Tensor(i, name, dtype_name, shape, offset, length, ggml_type, dtype, shard)
                        for i, (name, dtype_name, dtype, ggml_type, shape, offset, length, shard)
                        in enumerate(_rig.rig_py_load_tensors(self._raw))]
        self._by_name = {t.name: t for t in self.tensors}
        #: the files rig reads (one for a single file; a sharded checkpoint's in name order), as Shards
        self.shards = [Shard(*_rig.rig_py_load_shard(self._raw, i))
                       for i in range(_rig.rig_load_shard_count(self._raw))]

    def keep_registered(self, device):
        """Registers the whole file with ``device``'s driver once and keeps it while this file is open:
        later loads onto that device copy from it with nothing to register or stage (a reload at the
        link's rate), into device memory rig reuses (such tensors have no IPC handle: copy one to share
        it). Unsupported (naming the verdict) where the device's verdict is not Usable."""
        _rig.rig_load_file_keep_registered(self._raw, device._raw)

    @property
    def format(self):
        """What the file is (never AUTO)."""
        return Format(_rig.rig_load_file_format(self._raw))

    def __len__(self):
        return len(self.tensors)

    def __iter__(self):
        return iter(self.tensors)

    def __getitem__(self, name):
        """The Tensor called ``name`` (KeyError if none)."""
        return self._by_name[name]

    def index(self, tensor):
        """The index of a tensor given by name, Tensor or index (KeyError, IndexError otherwise)."""
        if isinstance(tensor, Tensor):
            return tensor.index
        if isinstance(tensor, str):
            return self._by_name[tensor].index
        i = int(tensor)
        if not 0 <= i < len(self.tensors):
            raise IndexError("tensor index %d outside 0..%d" % (i, len(self.tensors) - 1))
        return i

    def __repr__(self):
        if self._released:
            return "<rig.WeightsFile closed>"
        return "<rig.WeightsFile %s, %d tensors>" % (self.format.name.lower(), len(self.tensors))


class Pool(Owned):
    """Pinned staging chunks of one device kept across loads (rig_load_pool_create): making pinned memory
    is slow, so a process that loads more than once keeps one and passes it in ``pools``."""

    _release_fn = staticmethod(_rig.rig_load_pool_release)

    def __init__(self, device, nbytes, chunk_bytes=0):
        Owned.__init__(self, _rig.rig_load_pool_create(device._raw, nbytes, chunk_bytes))


class Load(Owned):
    """One running or finished load (rig_load_start). buffer() hands out a tensor as soon as its copies are
    submitted; wait() waits for the whole load; close() cancels a load still running and releases every
    buffer not handed out. A progress callable that raises cancels the load; wait() raises its
    exception."""

    _release_fn = staticmethod(_rig.rig_load_release)

    def __init__(self, file, devices, tensors, rule, masks, path, io, staging_bytes, chunk_bytes,
                 window_bytes, threads, verify, arena_bytes, pools, progress, splits=None, slices=None):
        ctx = _rig.rig_py_load_ctx_new(progress)
        raw = _rig.rig_py_load_start(file._raw, tensors, devices, int(rule), masks, int(path), int(io),
                                     staging_bytes, chunk_bytes, window_bytes, threads, 1 if verify else 0,
                                     arena_bytes, pools, splits, slices, ctx)
        # the context (progress callable, cancel flag) outlives the handle: close() releases the handle
        # first, which waits for the load's threads; the capsule goes with this object afterwards
        Owned.__init__(self, raw, keep=ctx)
        self.file = file
        self.devices = list(devices)
        self.tensors = [file.tensors[i] for i in tensors] if tensors is not None else list(file.tensors)

    def buffer(self, tensor, device=0):
        """A new Buffer of ``tensor`` (name, Tensor or index) on placement device ``device`` (its position
        in the devices given, or the Device itself), once its copies are submitted; raises the load's
        error once it failed or was cancelled (nothing half-loaded is handed out)."""
        device = self._position(device)
        raw = _rig.rig_load_buffer(self._raw, self.file.index(tensor), device)  # rig checks the index
        return Buffer(raw, device=self.devices[device])

    def slice(self, tensor, device=0):
        """(dim, start, end): the part of ``tensor`` placement device ``device`` holds (rig_load_slice_get;
        a tensor loaded whole answers (0, 0, shape[0])). ValueError where it is not placed there."""
        return _rig.rig_py_load_slice(self._raw, self.file.index(tensor), self._position(device))

    def part(self, tensor, device=0):
        """The Tensor of what ``device`` holds of ``tensor``: its shape with shape[dim] = end - start and
        its length, those of the buffer() of the same arguments."""
        t = self.file.tensors[self.file.index(tensor)]
        dim, start, end = self.slice(t, device)
        if not t.shape:
            return t
        shape = list(t.shape)
        length = t.length * (end - start) // shape[dim] if shape[dim] else 0
        shape[dim] = end - start
        return t._replace(shape=tuple(shape), length=length)

    def _position(self, device):
        """A placement position from a position or one of this load's Devices."""
        if isinstance(device, Device):
            matches = [i for i, d in enumerate(self.devices) if d is device]
            if not matches:
                raise ValueError("%r is not one of this load's devices" % (device,))
            return matches[0]
        return device

    def wait(self):
        """Waits until every copy is submitted (not until the devices finished copying)."""
        _rig.rig_py_load_wait(self._raw, self._keep)

    def cancel(self):
        """Asks the load to stop: its threads end at the next chunk and wait() raises Interrupted."""
        _rig.rig_py_load_cancel(self._keep)

    @property
    def stats(self):
        """A dict of what the finished load measured: path, why, direct_io, bytes_total, bytes_read,
        bytes_copied, seconds, first_tensor_seconds, staging_bytes, and the threads' phases read_seconds,
        staging_wait_seconds, alloc_seconds, submit_seconds (Busy while it runs)."""
        return _rig.rig_py_load_stats(self._raw)


def start_load(file, devices, tensors=None, *, rule=Rule.EACH, masks=None, path=Path.AUTO, io=IO.AUTO,
               staging_bytes=0, chunk_bytes=0, window_bytes=0, threads=0, verify=False, arena_bytes=0,
               pools=None, progress=None, split=None, slices=None):
    """Starts loading ``tensors`` (names, Tensors or indices; None: all) of ``file`` (a WeightsFile)
    onto ``devices`` (a Device, a device's name, or a list of them) and returns the running Load at
    once. ``rule`` places tensors on several devices ("each", "by_layer", "masks" with one bit mask per
    tensor); ``path`` is "auto", "staged", "registered" or "direct"; sizes of 0 take rig's defaults
    (64 MiB of staging, 4 MiB chunks, 256 MiB windows, min(12, 3/4 of the cores) reader threads, 1 GiB
    arenas: each device's tensors share device allocations of at most ``arena_bytes``, whose memory
    returns once every tensor in one is released; 1 gives each tensor its own).
    ``progress(bytes_done, bytes_total)`` is called from the load's threads.
    Tensor-parallel slices (docs/load.md): ``split`` splits every tensor whose name matches a glob along a
    dim over the devices, device k getting part k (the first parts one longer where the dim does not
    divide): a dict {pattern: dim} or a list of (pattern, dim), the first match applying; ``slices`` gives
    tensor and device their own part: a list of (tensor, device, dim, start, end), tensor a name, Tensor or
    index, device a position. Load.slice and Load.part say what each device holds."""
    devices = _devices(devices)
    indices = None if tensors is None else [file.index(t) for t in tensors]
    return Load(file, devices, indices, _enum(Rule, rule), masks, _enum(Path, path), _enum(IO, io),
                staging_bytes, chunk_bytes, window_bytes, threads, verify, arena_bytes, pools, progress,
                _splits(split), _slices(file, slices))


def _splits(split):
    """start_load's ``split`` as a list of (pattern, dim), or None."""
    if split is None:
        return None
    pairs = list(split.items()) if isinstance(split, dict) else list(split)
    for p in pairs:
        if not (isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], int)):
            raise TypeError("split: a dict {pattern: dim} or a list of (pattern, dim), not %r" % (split,))
    return pairs


def _slices(file, slices):
    """start_load's ``slices`` with each tensor as its index, or None."""
    if slices is None:
        return None
    out = []
    for s in slices:
        if not (isinstance(s, tuple) and len(s) == 5):
            raise TypeError("slices: a list of (tensor, device, dim, start, end), not %r" % (s,))
        out.append((file.index(s[0]),) + tuple(s[1:]))
    return out


class Loaded(dict):
    """What load() returns: tensor name -> Buffer (one device), or name -> list of Buffers, one per device
    the tensor is placed on in the order the devices were given (several devices); .stats as
    Load.stats."""
    stats = None


def load(file, device, tensors=None, **options):
    """Loads ``tensors`` (None: all) of ``file`` (a path or a WeightsFile) onto ``device`` (a Device, a
    name as rig.open_device takes it, opened once per process and kept, or a list of them with rule=...)
    and returns a Loaded dict of Buffers once every copy is submitted. Options as start_load. Each
    Buffer's stamps carry its copies: work that reads it follows them. FileNotFoundError (rig.NotFound
    too) for a missing file, ValueError (rig.InvalidArgument) for a bad one."""
    own = not isinstance(file, WeightsFile)
    weights = WeightsFile(file) if own else file
    try:
        several = not _single(device)
        with start_load(weights, device, tensors, **options) as running:
            running.wait()
            result = Loaded()
            for t in running.tensors:
                if not several:
                    result[t.name] = running.buffer(t, 0)
                    continue
                placed = []
                for d in range(len(running.devices)):
                    try:
                        placed.append(running.buffer(t, d))
                    except ValueError:  # InvalidArgument: not placed on that device
                        pass
                result[t.name] = placed
            result.stats = running.stats
            return result
    finally:
        if own:
            weights.close()
