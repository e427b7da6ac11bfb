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


def serve(path, device, sock):
    """`rig keep PATH --device DEVICE --socket SOCK` as a user starts it, once its socket exists."""
    if not RIG_TOOL:
        pytest.skip("RIG_TOOL (the rig command) not set: no keeper to attach to")
    p = subprocess.Popen([RIG_TOOL, "keep", path, "--device", device, "--socket", sock], stderr=subprocess.PIPE)
    for _ in range(500):
        if os.path.exists(sock) or p.poll() is not None:
            break
        time.sleep(0.01)
    assert os.path.exists(sock), "the keeper made no socket: %s" % p.stderr.read().decode()
    return p


def stopped(p):
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 0, p.stderr.read().decode()


@pytest.fixture
def keeper():
    with tempfile.TemporaryDirectory() as d:
        path, sock = os.path.join(d, "w.safetensors"), os.path.join(d, "s")
        header, _, data = write_safetensors(path)
        p = serve(path, "memory:k", sock)
        try:
            yield sock, header, data
        finally:
            stopped(p)


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


def test_a_torch_client_computes_on_every_tensor_of_a_cuda_keeper(numpy, cuda_device):
    """A keeper on cuda:0 (a real GPU: torch computes on the memory) and this process a PyTorch client:
    every one of 300 tensors of mixed shapes summed by torch on the GPU equals the file's, and tensor
    shapes and dtypes are the file's."""
    torch = pytest.importorskip("torch", reason="torch not installed: no PyTorch client")
    if not torch.cuda.is_available() or os.environ.get("RIG_CUDA_LIBRARY"):
        pytest.skip("torch needs a real CUDA GPU (the fake libcuda is rig's only)")
    rng = numpy.random.default_rng(7)
    arrays = {"layer.%03d.w" % i: rng.standard_normal((1 + i % 7, 1 + (i * 37) % 900)).astype(numpy.float32)
              for i in range(300)}
    header, data = {}, b""
    for name, a in arrays.items():
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [len(data), len(data) + a.nbytes]}
        data += a.tobytes()
    h = json.dumps(header).encode()
    with tempfile.TemporaryDirectory() as d:
        path, sock = os.path.join(d, "m.safetensors"), os.path.join(d, "s")
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + data)
        p = serve(path, "cuda:0", sock)
        try:
            weights = rig.attach(sock, framework="pt", device="cuda:0")
            assert sorted(weights) == sorted(arrays)
            sums = torch.stack([weights[n].double().sum() for n in sorted(arrays)]).cpu().numpy()
            want = numpy.array([arrays[n].astype(numpy.float64).sum() for n in sorted(arrays)])
            assert numpy.allclose(sums, want, rtol=1e-9, atol=1e-9)
            for n, a in arrays.items():
                assert tuple(weights[n].shape) == a.shape and weights[n].dtype == torch.float32
                assert weights[n].device.type == "cuda"
            del weights
        finally:
            stopped(p)
