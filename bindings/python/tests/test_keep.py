# rig.attach: a `rig keep` process (the command, as a user runs it) serves a small safetensors file; this
# process attaches and gets every tensor as numpy arrays and rig.Buffers of the file's dtypes and shapes.
import json
import os
import signal
import struct
import subprocess
import tempfile
import time

import pytest

import rig

RIG_TOOL = os.environ.get("RIG_TOOL")


def write_safetensors(path):
    tensors = {"a.weight": ("F32", [2, 3]), "b.bias": ("I16", [5]), "c.bytes": ("U8", [7])}
    sizes = {"F32": 4, "I16": 2, "U8": 1}
    header, data = {}, b""
    for name, (dtype, shape) in sorted(tensors.items()):
        n = sizes[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + n]}
        data += bytes((len(data) + i) * 7 % 251 for i in range(n))
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)
    return header, 8 + len(h), data


@pytest.fixture
def keeper():
    if not RIG_TOOL:
        pytest.skip("RIG_TOOL (the rig command) not set: no keeper to attach to")
    with tempfile.TemporaryDirectory() as d:
        path, sock = os.path.join(d, "w.safetensors"), os.path.join(d, "s")
        header, _, data = write_safetensors(path)
        p = subprocess.Popen([RIG_TOOL, "keep", path, "--device", "memory:k", "--socket", sock],
                             stderr=subprocess.PIPE)
        try:
            for _ in range(500):
                if os.path.exists(sock):
                    break
                time.sleep(0.01)
            assert os.path.exists(sock), "the keeper made no socket"
            yield sock, header, data
        finally:
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=10) == 0, p.stderr.read().decode()


def test_attach_numpy_arrays_of_the_files_dtypes_shapes_and_bytes_read_only(keeper, numpy):
    sock, header, data = keeper
    weights = rig.attach(sock, framework="np")
    assert sorted(weights) == sorted(header)
    for name, h in header.items():
        a = weights[name]
        assert list(a.shape) == h["shape"]
        assert a.dtype == {"F32": numpy.float32, "I16": numpy.int16, "U8": numpy.uint8}[h["dtype"]]
        lo, hi = h["data_offsets"]
        assert a.tobytes() == data[lo:hi]
        assert not a.flags.writeable


def test_attach_rig_buffers_and_errors(keeper):
    sock, header, data = keeper
    weights = rig.attach(sock, framework="rig")
    lo, hi = header["c.bytes"]["data_offsets"]
    assert weights["c.bytes"].to_bytes() == data[lo:hi]
    with pytest.raises(rig.InvalidArgument):
        weights["c.bytes"].write_from(0, b"x")  # rig refuses writes into read-only memory
    with pytest.raises(rig.NotFound):
        rig.attach(sock + ".none", framework="rig")
    with pytest.raises(ValueError):
        rig.attach(sock, framework="tf")
