# Typed tensors as safetensors users write them (rig.load_file, rig.safe_open): a file written here by hand
# with every dtype and several shapes, loaded onto memory devices, each tensor's dtype, shape and values
# compared with numpy reading the same bytes of the file; torch where installed (the GPU machine).
import json
import os
import struct

import pytest

import rig

# the file's dtype -> (numpy dtype name or None where numpy has none, torch dtype name)
DTYPES = {
    "BOOL": ("bool", "bool"), "U8": ("uint8", "uint8"), "I8": ("int8", "int8"),
    "F8_E4M3": (None, "float8_e4m3fn"), "F8_E5M2": (None, "float8_e5m2"),
    "U16": ("uint16", "uint16"), "I16": ("int16", "int16"), "F16": ("float16", "float16"),
    "BF16": (None, "bfloat16"),
    "U32": ("uint32", "uint32"), "I32": ("int32", "int32"), "F32": ("float32", "float32"),
    "U64": ("uint64", "uint64"), "I64": ("int64", "int64"), "F64": ("float64", "float64"),
}
SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "I16": 2, "F16": 2, "BF16": 2,
         "U32": 4, "I32": 4, "F32": 4, "U64": 8, "I64": 8, "F64": 8}
SHAPES = [(3, 5), (7,), (), (2, 3, 4), (0, 4), (1, 1, 1, 6)]


def payload(dtype, shape, seed):
    n = 1
    for d in shape:
        n *= d
    size = SIZES[dtype]
    if dtype == "BOOL":
        return bytes((i * 7 + seed) % 3 == 0 for i in range(n))
    if dtype in ("F16", "F32", "F64"):  # finite values, so that comparing them compares the bytes
        fmt = {"F16": "e", "F32": "f", "F64": "d"}[dtype]
        return struct.pack("<%d%s" % (n, fmt), *[(i - 4) * 0.375 + seed for i in range(n)])
    return bytes((i * 131 + seed * 17 + 5) & 0xFF for i in range(n * size))


def write_safetensors(path, tensors, metadata=None, align=8):
    """tensors: [(name, dtype, shape, bytes)], written in that order. Returns the file's bytes."""
    header, data = {}, bytearray()
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % align)
    blob = struct.pack("<Q", len(text)) + text + bytes(data)
    with open(path, "wb") as f:
        f.write(blob)
    return blob


def file_tensor(blob, name):
    """(dtype, shape, bytes) of tensor ``name`` as the file says, read by this test alone."""
    n = struct.unpack("<Q", blob[:8])[0]
    entry = json.loads(blob[8:8 + n])[name]
    begin, end = entry["data_offsets"]
    return entry["dtype"], tuple(entry["shape"]), blob[8 + n + begin:8 + n + end]


@pytest.fixture
def every_dtype(tmp_path):
    """A safetensors file with each dtype in a few shapes (scalars and empty tensors among them) and a
    __metadata__; returns (path, file bytes, names)."""
    tensors = []
    for i, dtype in enumerate(sorted(DTYPES)):
        for j, shape in enumerate(SHAPES[i % 3:i % 3 + 3]):
            tensors.append(("t.%s.%d" % (dtype.lower(), j), dtype, shape, payload(dtype, shape, i + j)))
    path = str(tmp_path / "every.safetensors")
    blob = write_safetensors(path, tensors, {"format": "pt", "written by": "test_typed"})
    return path, blob, [t[0] for t in tensors]


def numpy_of_file(numpy, blob, name):
    dtype, shape, raw = file_tensor(blob, name)
    return numpy.frombuffer(raw, dtype=DTYPES[dtype][0]).reshape(shape)


def test_load_file_numpy_has_every_dtype_and_shape_of_the_file(every_dtype, numpy):
    path, blob, names = every_dtype
    typed = [n for n in names if DTYPES[file_tensor(blob, n)[0]][0] is not None]
    with rig.safe_open(path, framework="np", device="memory:typed") as f:
        assert f.keys() == sorted(names)
        for name in typed:
            want = numpy_of_file(numpy, blob, name)
            a = f.get_tensor(name)
            assert isinstance(a, numpy.ndarray), name
            assert (a.dtype, a.shape) == (want.dtype, want.shape), name
            assert a.tobytes() == want.tobytes(), name


def test_load_file_numpy_gives_every_numpy_type_without_a_copy(tmp_path, numpy):
    path = str(tmp_path / "np.safetensors")
    tensors = [("%s" % d.lower(), d, (4, 3), payload(d, (4, 3), 1)) for d in DTYPES if DTYPES[d][0]]
    blob = write_safetensors(path, tensors)
    got = rig.load_file(path, device="memory:np", framework="np")
    assert sorted(got) == sorted(t[0] for t in tensors)
    assert got.stats["bytes_total"] == sum(len(t[3]) for t in tensors)  # one load of every tensor
    for name, a in got.items():
        want = numpy_of_file(numpy, blob, name)
        assert (a.dtype, a.shape, a.tobytes()) == (want.dtype, want.shape, want.tobytes()), name
        assert not a.flags.owndata  # a view of the loaded bytes: numpy made no array of its own


def test_bf16_and_f8_in_numpy_through_ml_dtypes_or_a_clear_error(every_dtype, numpy):
    path, blob, names = every_dtype
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    with rig.safe_open(path, framework="np", device="cpu") as f:
        for name, kind in (("t.bf16.0", "bfloat16"), ("t.f8_e4m3.1", "float8_e4m3fn"),
                           ("t.f8_e5m2.0", "float8_e5m2")):
            dtype, shape, raw = file_tensor(blob, name)
            if ml_dtypes is None:
                with pytest.raises(TypeError, match=r"%s.*%s.*ml_dtypes" % (name.replace(".", r"\."), dtype)):
                    f.get_tensor(name)
            else:
                a = f.get_tensor(name)
                assert (a.dtype, a.shape, a.tobytes()) == (numpy.dtype(getattr(ml_dtypes, kind)), shape, raw)
            assert f.get_slice(name).get_dtype() == dtype


def test_framework_rig_gives_buffers_of_the_files_bytes(every_dtype):
    path, blob, names = every_dtype
    got = rig.load_file(path, device="memory:bytes", framework="rig")
    assert sorted(got) == sorted(names)
    for name, buf in got.items():
        assert isinstance(buf, rig.Buffer)
        assert buf.to_bytes() == file_tensor(blob, name)[2], name
        assert buf.device.name == "bytes"


def test_metadata_keys_and_offset_keys(every_dtype, tmp_path):
    path, blob, names = every_dtype
    with rig.safe_open(path, framework="rig", device="memory:m") as f:
        assert f.metadata() == {"format": "pt", "written by": "test_typed"}
        assert f.keys() == sorted(names)
        assert f.offset_keys() == names  # the order the test wrote them
    bare = str(tmp_path / "bare.safetensors")
    write_safetensors(bare, [("x", "U8", (2,), b"ab")])
    with rig.safe_open(bare, framework="rig", device="memory:m") as f:
        assert f.metadata() is None


def test_a_device_name_opens_one_device_kept_for_every_load(every_dtype):
    path, _, _ = every_dtype
    a = rig.load_file(path, device="memory:kept", framework="rig")
    b = rig.load(path, "memory:kept")  # rig.load takes a name too
    assert a["t.u8.0"].device is b["t.u8.0"].device
    assert rig.load(path, "cpu")["t.u8.0"].device.name == "cpu"
    with rig.memory_device("mine") as mine:  # a Device of the caller's goes as it is
        assert rig.load_file(path, device=mine, framework="rig")["t.u8.0"].device is mine


def test_a_tensor_outlives_every_object_but_itself_and_its_device_stays_open(every_dtype, numpy):
    import gc
    path, blob, _ = every_dtype
    with rig.safe_open(path, framework="np", device="memory:lives") as f:
        a = f.get_tensor("t.f64.0")
    gc.collect()  # the file, the Buffer and the load are gone: the array holds the allocation
    device = rig.load(path, "memory:lives", ["t.u8.0"])["t.u8.0"].device
    assert not device.closed and device.name == "lives"
    assert a.tobytes() == file_tensor(blob, "t.f64.0")[2]
    device.close()  # a caller closing the named device: the next load opens it again
    assert rig.load(path, "memory:lives", ["t.u8.0"])["t.u8.0"].device is not device
    assert a.tobytes() == file_tensor(blob, "t.f64.0")[2]  # the array's memory is its own to keep


def rows_read(monkeypatch):
    """Records rig's stats of every load safe_open's slices start."""
    import rig._safetensors as st
    seen, load = [], st.load

    def recording(*args, **kw):
        loaded = load(*args, **kw)
        seen.append(loaded.stats)
        return loaded
    monkeypatch.setattr(st, "load", recording)
    return seen


def test_get_slice_equals_numpys_slice_and_reads_only_its_rows(tmp_path, numpy, monkeypatch):
    path = str(tmp_path / "slices.safetensors")
    m = numpy.arange(10 * 6, dtype=numpy.float32).reshape(10, 6)
    v = numpy.arange(9, dtype=numpy.int16)
    write_safetensors(path, [("m", "F32", m.shape, m.tobytes()), ("v", "I16", v.shape, v.tobytes())])
    seen = rows_read(monkeypatch)
    row, column = 6 * 4, 10 * 4
    cases = [  # index, bytes read: the rows, or the columns where full rows come first (a placement's slice)
        ((slice(2, 5),), 3 * row), (slice(2, 5), 3 * row), (3, row), (-1, row),
        ((slice(None), slice(1, 4)), 3 * column), ((slice(None), 5), column), ((slice(None), slice(4, 0, -2)), 3 * column),
        ((slice(4, 8), slice(None, None, 2)), 4 * row), ((Ellipsis, slice(2, 3)), 10 * row), (slice(1, 9, 3), 7 * row),
        (slice(9, 0, -4), 9 * row), (slice(5, 2), row), ((slice(7, None), 2), 3 * row), (slice(-3, None), 3 * row),
    ]
    with rig.safe_open(path, framework="np", device="memory:s") as f:
        s = f.get_slice("m")
        assert (s.get_shape(), s.get_dtype(), len(s)) == ([10, 6], "F32", 10)
        for index, read in cases:
            del seen[:]
            got, want = s[index], m[index]
            assert (got.dtype, got.shape) == (want.dtype, want.shape), index
            assert got.tolist() == want.tolist(), index
            assert [st["bytes_total"] for st in seen] == [read], index
            # staged (columns, gathered) counts its reads; the direct path of rows counts its window's pages
            assert seen[0]["path"] == "direct" or seen[0]["bytes_read"] == read, index
        assert f.get_slice("v")[2:7].tolist() == v[2:7].tolist()
        with pytest.raises(IndexError, match="out of bounds"):
            s[10]


def test_framework_rig_slices_one_dimension_by_a_range(tmp_path, monkeypatch):
    path = str(tmp_path / "rows.safetensors")
    raw = bytes(range(40))
    write_safetensors(path, [("w", "U16", (4, 5), raw)])
    seen = rows_read(monkeypatch)
    with rig.safe_open(path, framework="rig", device="memory:r") as f:
        buf = f.get_slice("w")[1:3]
        assert buf.to_bytes() == raw[10:30] and seen[-1]["bytes_total"] == 20
        columns = f.get_slice("w")[:, 1:3]  # columns 1 and 2 of each row, gathered: 4 bytes a row
        assert columns.to_bytes() == b"".join(raw[r * 10 + 2:r * 10 + 6] for r in range(4))
        assert seen[-1]["bytes_total"] == seen[-1]["bytes_read"] == 16
        with pytest.raises(TypeError, match="step-1 range"):
            f.get_slice("w")[::2]


def test_load_file_split_gives_each_device_numpys_part_reading_each_byte_once(tmp_path, numpy):
    path = str(tmp_path / "tp.safetensors")
    col = numpy.arange(7 * 10, dtype=numpy.float32).reshape(7, 10)  # split by columns: 5 and 5
    row = numpy.arange(9 * 4, dtype=numpy.int16).reshape(9, 4)  # by rows, not divisible: 5 and 4
    norm = numpy.arange(6, dtype=numpy.float64)  # no pattern: whole on both
    blob = write_safetensors(path, [("l.col.w", "F32", col.shape, col.tobytes()),
                                    ("l.row.w", "I16", row.shape, row.tobytes()),
                                    ("l.norm", "F64", norm.shape, norm.tobytes())])
    devices = ["memory:tp0", "memory:tp1"]
    got = rig.load_file(path, device=devices, framework="np", split={"*.col.w": 1, "l.row.?": 0})
    data = col.nbytes + row.nbytes + norm.nbytes
    assert got.stats["bytes_total"] == got.stats["bytes_read"] == data  # each byte of the file read once
    assert got.stats["path"] == "staged"  # columns are gathered in staging
    for name, a, dim in (("l.col.w", col, 1), ("l.row.w", row, 0)):
        parts = numpy.array_split(a, 2, axis=dim)
        assert [p.shape for p in got[name]] == [p.shape for p in parts], name
        assert all(g.tolist() == w.tolist() for g, w in zip(got[name], parts)), name
    assert [p.tolist() for p in got["l.norm"]] == [norm.tolist()] * 2
    with rig.WeightsFile(path) as weights, rig.start_load(weights, devices, split=[("l.col.w", 1)],
                                                          slices=[("l.row.w", 1, 1, 1, 3)]) as running:
        running.wait()
        assert running.slice("l.col.w", 1) == (1, 5, 10) and running.slice("l.norm", 0) == (0, 0, 6)
        assert running.slice("l.row.w", 1) == (1, 1, 3) and running.part("l.row.w", 1).shape == (9, 2)
        with pytest.raises(rig.InvalidArgument, match="not placed"):
            running.slice("l.row.w", 0)
    with pytest.raises(rig.InvalidArgument, match="'l.norm'.*past its rank"):
        rig.load_file(path, device=devices, framework="np", split=[("l.norm", 1)])
    with pytest.raises(TypeError, match="list of devices"):
        rig.load_file(path, device="memory:tp0", framework="np", split={"*": 0})


def write_gguf(path, tensors):
    """A GGUF v3 file: tensors as (name, ne (innermost first), ggml type, bytes), 32-byte aligned."""
    def string(s):
        return struct.pack("<Q", len(s)) + s.encode()
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1)
    head += string("general.alignment") + struct.pack("<II", 4, 32)
    data, offsets = bytearray(), []
    for name, ne, kind, raw in tensors:
        data += b"\0" * (-len(data) % 32)
        offsets.append(len(data))
        data += raw
    for (name, ne, kind, raw), offset in zip(tensors, offsets):
        head += string(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
        head += struct.pack("<IQ", kind, offset)
    head += b"\0" * (-len(head) % 32)
    with open(path, "wb") as f:
        f.write(head + bytes(data))


def test_gguf_quantized_types_are_bytes_for_rig_and_a_clear_error_for_typed_frameworks(tmp_path, numpy):
    path = str(tmp_path / "model.gguf")
    q8 = bytes((i * 7) & 0xFF for i in range(2 * 34))  # Q8_0: two blocks of 32 elements, 34 bytes each
    f32 = numpy.arange(8, dtype=numpy.float32)
    write_gguf(path, [("blk.0.q", (64,), 8, q8), ("tok.w", (4, 2), 0, f32.tobytes())])
    got = rig.load_file(path, device="memory:g", framework="rig")
    assert got["blk.0.q"].to_bytes() == q8
    with pytest.raises(TypeError, match=r"'blk\.0\.q' is Q8_0.*framework='rig'"):
        rig.load_file(path, device="memory:g", framework="np")
    with rig.safe_open(path, framework="np", device="memory:g") as f:
        assert f.metadata() is None  # GGUF's key/values: not through rig_load.h yet
        t = f.get_tensor("tok.w")
        assert t.shape == (2, 4) and t.tolist() == f32.reshape(2, 4).tolist()  # ne reversed: outermost first
        with pytest.raises(TypeError, match="Q8_0"):
            f.get_slice("blk.0.q")[0:1]


def test_what_users_catch(tmp_path, every_dtype, numpy):
    path, blob, _ = every_dtype
    missing = str(tmp_path / "missing.safetensors")
    for call in (lambda: rig.load_file(missing, device="cpu", framework="np"),
                 lambda: rig.safe_open(missing, framework="rig", device="cpu"),
                 lambda: rig.load(missing, "cpu")):
        with pytest.raises(FileNotFoundError) as caught:
            call()
        assert caught.value.filename == missing and caught.value.errno == 2
        assert isinstance(caught.value, rig.NotFound) and "No such file" in str(caught.value)
    bad = tmp_path / "bad.safetensors"
    for content in (blob[:300], b"\x10\0\0\0\0\0\0\0{not json}      ", b"\x02"):
        bad.write_bytes(content)
        with pytest.raises(ValueError):
            rig.load_file(str(bad), device="cpu", framework="np")
    with pytest.raises(TypeError, match="device: a rig.Device, a name"):
        rig.load_file(path, device=object(), framework="rig")
    with pytest.raises(TypeError, match="framework: a str"):
        rig.load_file(path, device="cpu", framework=3)
    with pytest.raises(ValueError, match="framework must be one of 'pt', 'np', 'rig', not 'tf'"):
        rig.safe_open(path, framework="tf", device="cpu")
    with pytest.raises(TypeError, match="path: a str, bytes or os.PathLike, not float"):
        rig.load_file(1.5, device="cpu", framework="np")
    with pytest.raises(rig.NotFound):  # a name no device has
        rig.load_file(path, device="nosuchdriver:0", framework="rig")
    # the device opens beside the file (_safetensors._file_and_device): the file's error still comes first
    with pytest.raises(FileNotFoundError):
        rig.load_file(missing, device="nosuchdriver:0", framework="rig")
    with pytest.raises(FileNotFoundError):
        rig.load_file(missing, device=object(), framework="rig")
    with rig.safe_open(path, framework="np", device="cpu") as f:
        with pytest.raises(KeyError, match="no tensor 'nope'"):
            f.get_tensor("nope")


def test_safe_open_on_a_gpu_stages_every_tensor_through_one_pool(every_dtype, cuda_device, monkeypatch):
    path, blob, names = every_dtype
    seen = rows_read(monkeypatch)
    with rig.safe_open(path, framework="rig", device=cuda_device) as f:
        for name in names:
            buf = f.get_tensor(name)
            assert buf.device is cuda_device and buf.to_bytes() == file_tensor(blob, name)[2], name
        pool = f._pool
        assert pool is not None and not pool.closed
        assert f.get_slice("t.i32.1")[1:2].to_bytes() == file_tensor(blob, "t.i32.1")[2][48:96]  # (2, 3, 4)
        assert f._pool is pool  # the slice's load staged through it too
        assert all(st["path"] == "staged" for st in seen if st["bytes_total"])
    assert pool.closed


def test_vulkan_gives_buffers_and_typed_frameworks_are_told_it_has_no_dlpack(every_dtype):
    if "vulkan:0" not in rig.device_list():
        reason = "no vulkan:0 (Debian: mesa-vulkan-drivers for lavapipe)"
        if "vulkan" in os.environ.get("RIG_REQUIRE", "").split(","):
            pytest.fail(reason)
        pytest.skip(reason)
    path, blob, names = every_dtype
    got = rig.load_file(path, device="vulkan:0", framework="rig")
    for name in names:
        assert got[name].to_bytes() == file_tensor(blob, name)[2], name
    for framework in ("np", "pt"):
        with pytest.raises((TypeError, ImportError), match="DLPack|needs torch"):
            rig.load_file(path, device="vulkan:0", framework=framework)
    with rig.safe_open(path, framework="rig", device="vulkan:0") as f:
        raw = file_tensor(blob, "t.u32.0")[2]  # (3, 5) of 4 bytes
        assert f.get_slice("t.u32.0")[1:].to_bytes() == raw[20:]
        assert f.get_tensor("t.u32.0").to_bytes() == raw


def test_numpy_refuses_gpu_memory_before_loading(every_dtype, cuda_device):
    path, _, _ = every_dtype
    with pytest.raises(TypeError, match="framework='np' reads host memory"):
        rig.load_file(path, device=cuda_device, framework="np")


def test_without_torch_framework_pt_says_so(every_dtype):
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="framework='pt' needs torch"):
            rig.load_file(every_dtype[0], device="cpu")
    else:
        pytest.skip("torch is installed: test_torch_* run instead")


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="torch not installed: the PyTorch cases run on the GPU machine")


def torch_of_file(torch, blob, name):
    dtype, shape, raw = file_tensor(blob, name)
    flat = torch.frombuffer(bytearray(raw), dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
    return flat.view(getattr(torch, DTYPES[dtype][1])).reshape(shape)


def as_bytes(torch, t):
    return t.contiguous().reshape(-1).view(torch.uint8)


def check_torch(torch, path, blob, names, device):
    """Every tensor through load_file and safe_open on ``device`` equals torch's reading of the file; a
    type this torch lacks (float8 before 2.1, uint16 before 2.3) is a TypeError naming it, and makes
    load_file of the whole file one (checked before a byte is read)."""
    missing = {n for n in names if not hasattr(torch, DTYPES[file_tensor(blob, n)[0]][1])}
    if missing:
        with pytest.raises(TypeError, match="has no torch"):
            rig.load_file(path, device=device)
        whole = {}
    else:
        whole = rig.load_file(path, device=device)
    with rig.safe_open(path, framework="pt", device=device) as f:
        for name in names:
            if name in missing:
                with pytest.raises(TypeError, match=r"'%s' is .*torch .* has no torch" % name.replace(".", r"\.")):
                    f.get_tensor(name)
                continue
            want = torch_of_file(torch, blob, name)
            for t in [f.get_tensor(name)] + ([whole[name]] if whole else []):
                assert isinstance(t, torch.Tensor) and t.device == torch.device(device), name
                assert (t.dtype, tuple(t.shape)) == (want.dtype, tuple(want.shape)), name
                assert torch.equal(as_bytes(torch, t.cpu()), as_bytes(torch, want)), name
            if want.dim() and want.shape[0] > 1:
                part = f.get_slice(name)[1:]
                assert torch.equal(as_bytes(torch, part.cpu()), as_bytes(torch, want[1:])), name


def test_torch_every_dtype_on_host_memory(every_dtype, torch):
    path, blob, names = every_dtype
    check_torch(torch, path, blob, names, "cpu")


def test_torch_on_the_gpu_through_dlpack_and_the_stream_protocol(every_dtype, torch):
    if os.environ.get("RIG_CUDA_LIBRARY"):
        pytest.skip("rig's cuda:0 is the fake libcuda (RIG_CUDA_LIBRARY): torch cannot read its memory; on a "
                    "GPU machine run pytest on this file without RIG_CUDA_LIBRARY")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA GPU")
    path, blob, names = every_dtype
    check_torch(torch, path, blob, names, "cuda:0")
