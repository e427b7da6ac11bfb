# rig.load and the loader's Python layer (rig_load.h): real safetensors files written here, loaded onto
# memory devices (and the fake libcuda where meson sets it), every byte compared with the file's.
import json
import os
import struct

import threading

import pytest

import rig


def write_safetensors(path, tensors):
    """tensors: list of (name, dtype, shape, bytes). Returns {name: bytes}."""
    header, data, offset = {}, bytearray(), 0
    for name, dtype, shape, payload in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(payload)]}
        data += payload
        offset += len(payload)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(data))
    return {name: payload for name, _, _, payload in tensors}


def pattern(n, seed):
    return bytes((i * 131 + seed * 17 + (i >> 8)) & 0xFF for i in range(n))


@pytest.fixture
def weights(tmp_path):
    """A safetensors file of five layers' tensors, some large enough to span several 64 KiB chunks."""
    tensors = [("embed.weight", "F32", (64, 32), pattern(64 * 32 * 4, 1))]
    for layer in range(4):
        tensors.append(("layers.%d.w" % layer, "BF16", (256, 300), pattern(256 * 300 * 2, layer + 2)))
        tensors.append(("layers.%d.b" % layer, "F16", (7,), pattern(14, layer + 10)))
    path = tmp_path / "model.safetensors"
    return str(path), write_safetensors(path, tensors)


def test_weights_file_lists_its_tensors(weights):
    path, expected = weights
    with rig.WeightsFile(path) as f:
        assert f.format == rig.Format.SAFETENSORS
        assert len(f) == len(expected)
        assert {t.name for t in f} == set(expected)
        t = f["layers.2.w"]
        assert (t.dtype, t.shape, t.length) == ("BF16", (256, 300), 256 * 300 * 2)
        with open(path, "rb") as raw:
            raw.seek(t.offset)
            assert raw.read(t.length) == expected["layers.2.w"]
        assert f.index("layers.2.w") == t.index
        with pytest.raises(KeyError):
            f["no.such.tensor"]


def test_a_checkpoint_of_two_shards_lists_its_shards_and_loads_every_byte(tmp_path, weights, device):
    """A sharded checkpoint (two shards and its index) opens by the index and by its directory as one
    table: its shards in name order with their sizes, every tensor's shard, every byte on the device."""
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    first = write_safetensors(tmp_path / names[0], [("a.w", "F32", (4, 8), pattern(128, 1)),
                                                    ("b.b", "U8", (5,), pattern(5, 2))])
    second = write_safetensors(tmp_path / names[1], [("c.w", "BF16", (3, 7), pattern(42, 3))])
    weight_map = dict({n: names[0] for n in first}, **{n: names[1] for n in second})
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 175}, "weight_map": weight_map}))
    expected = dict(first, **second)
    for path in (index, tmp_path):
        with rig.WeightsFile(path) as f:
            assert [os.path.basename(s.path) for s in f.shards] == names
            assert [s.bytes for s in f.shards] == [os.path.getsize(tmp_path / n) for n in names]
            assert {t.name for t in f} == set(expected)
            for t in f:  # each tensor's bytes where its shard's path and its offset say
                assert t.shard == (0 if t.name in first else 1), t
                with open(f.shards[t.shard].path, "rb") as raw:
                    raw.seek(t.offset)
                    assert raw.read(t.length) == expected[t.name], t.name
            loaded = rig.load(f, device)
            assert {name: buf.to_bytes() for name, buf in loaded.items()} == expected
    one, _ = weights
    with rig.WeightsFile(one) as f:
        assert f.shards == [(one, os.path.getsize(one))]  # a Shard(path, bytes)


def test_load_puts_every_byte_on_the_device(weights, device):
    path, expected = weights
    loaded = rig.load(path, device, chunk_bytes=64 << 10, threads=3)
    assert set(loaded) == set(expected)
    for name, buf in loaded.items():
        assert buf.to_bytes() == expected[name], name
        buf.close()
    assert loaded.stats["bytes_total"] == sum(len(v) for v in expected.values())
    assert loaded.stats["bytes_copied"] == loaded.stats["bytes_total"]
    assert loaded.stats["path"] in ("direct", "staged")
    assert loaded.stats["why"]


def test_arenas_of_any_size_give_the_same_bytes(weights, device):
    # arena_bytes: tensors share device allocations of at most that many bytes; 1 gives each its own
    path, expected = weights
    for arena in (1, 200 << 10, 0):
        loaded = rig.load(path, device, chunk_bytes=64 << 10, arena_bytes=arena)
        for name, buf in loaded.items():
            assert buf.to_bytes() == expected[name], (arena, name)
            buf.close()


def test_a_chosen_set_by_name_and_every_path_a_memory_device_takes(weights, device):
    path, expected = weights
    for way in ("staged", "direct", "auto"):
        loaded = rig.load(path, device, ["layers.1.b", "embed.weight"], path=way, chunk_bytes=64 << 10)
        assert set(loaded) == {"layers.1.b", "embed.weight"}
        assert loaded.stats["path"] == (way if way != "auto" else loaded.stats["path"])
        for name, buf in loaded.items():
            assert buf.to_bytes() == expected[name], (way, name)


def test_first_tensor_handed_out_while_the_load_runs_and_work_follows_it(weights, device):
    path, expected = weights
    with rig.WeightsFile(path) as f, rig.start_load(f, device, chunk_bytes=64 << 10, threads=2) as running:
        first = running.buffer("embed.weight")
        # a copy that reads the tensor follows the load's write through the stamps, with no wait written
        out = rig.Buffer.create(device, len(first))
        rig.submit(device, [rig.copy(0, 1)], [(first, rig.READ), (out, rig.WRITE)])
        assert out.to_bytes() == expected["embed.weight"]
        running.wait()
        stats = running.stats
        assert 0 < stats["first_tensor_seconds"] <= stats["seconds"]
        assert running.buffer("layers.3.w", device).to_bytes() == expected["layers.3.w"]


def test_progress_reaches_the_total_in_order(weights, device):
    path, expected = weights
    seen = []
    rig.load(path, device, chunk_bytes=64 << 10, progress=lambda done, total: seen.append((done, total)))
    total = sum(len(v) for v in expected.values())
    assert seen and seen[-1] == (total, total)
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    assert all(t == total for _, t in seen)


def test_a_progress_callback_that_raises_cancels_the_load(weights, device):
    path, _ = weights

    def fail(done, total):
        raise ZeroDivisionError("stop here")

    with rig.WeightsFile(path) as f:
        running = rig.start_load(f, device, chunk_bytes=64 << 10, progress=fail)
        with pytest.raises(ZeroDivisionError, match="stop here"):
            running.wait()
        with pytest.raises(rig.Interrupted):  # nothing half-loaded is handed out
            running.buffer("layers.3.w")
        running.close()


def test_cancel_stops_a_load(weights, device):
    path, _ = weights
    started = threading.Event()
    holder = []

    def cancel(done, total):  # on the load's thread, which may call it before start_load returns
        started.wait()
        holder[0].cancel()

    with rig.WeightsFile(path) as f:
        running = rig.start_load(f, device, chunk_bytes=64 << 10, threads=1, progress=cancel)
        holder.append(running)
        started.set()
        with pytest.raises(rig.Interrupted):
            running.wait()
        running.close()


def test_two_devices_by_layer(weights):
    path, expected = weights
    with rig.memory_device("L0") as a, rig.memory_device("L1") as b:
        loaded = rig.load(path, [a, b], rule="by_layer", chunk_bytes=64 << 10)
        assert len(loaded["layers.0.w"]) == 1 and len(loaded["layers.3.w"]) == 1
        assert loaded["layers.0.w"][0].device.name != loaded["layers.3.w"][0].device.name
        assert loaded["embed.weight"][0].device.name == a.name
        for name, bufs in loaded.items():
            for buf in bufs:
                assert buf.to_bytes() == expected[name], name
        each = rig.load(path, [a, b], ["layers.2.w"], rule="each")
        assert [buf.to_bytes() for buf in each["layers.2.w"]] == [expected["layers.2.w"]] * 2
        assert each.stats["bytes_read"] >= len(expected["layers.2.w"])


def test_raw_ranges_of_any_file(tmp_path, device):
    data = pattern(100000, 7)
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    with rig.WeightsFile(path, ranges=[("head", 0, 1000), ("tail", 99000, 1000)]) as f:
        assert f.format == rig.Format.RAW
        loaded = rig.load(f, device)
        assert loaded["head"].to_bytes() == data[:1000]
        assert loaded["tail"].to_bytes() == data[99000:]
    with pytest.raises(rig.InvalidArgument, match="overlap|outside"):
        rig.WeightsFile(path, ranges=[("a", 0, 1000), ("b", 500, 1000)])


def test_bad_input_raises_rigs_errors(tmp_path, weights, device):
    path, _ = weights
    with pytest.raises(rig.NotFound):
        rig.load(str(tmp_path / "missing.safetensors"), device)
    with pytest.raises(FileNotFoundError):  # the same error, as Python's own (issue 32)
        rig.load(str(tmp_path / "missing.safetensors"), device)
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(open(path, "rb").read()[:200])
    with pytest.raises(rig.InvalidArgument):
        rig.WeightsFile(truncated)
    with pytest.raises(ValueError, match="must be one of"):
        rig.load(path, device, path="teleport")
    with pytest.raises(rig.Unsupported):  # a memory device's verdict is not Usable
        rig.load(path, device, path="registered")
    with rig.WeightsFile(path) as f:
        with pytest.raises(IndexError):
            rig.start_load(f, device, [99])
        with pytest.raises(TypeError):
            rig.start_load(f, [object()])


def test_a_device_name_where_a_device_goes_opens_it_once(weights):
    # rig.load(path, "cuda:0") once iterated the str and SWIG refused its first letter ("not 'c'"); a name
    # is one device now, opened once per process and kept while tensors on it live (issue 32)
    path, expected = weights
    loaded = rig.load(path, "memory:A")
    assert loaded["embed.weight"].to_bytes() == expected["embed.weight"]
    assert loaded["embed.weight"].device is rig.load(path, "memory:A")["layers.0.w"].device
    mine = rig.memory_device("M")
    several = rig.load(path, [mine, "memory:A"], ["layers.1.w"])
    assert [b.device for b in several["layers.1.w"]] == [mine, loaded["embed.weight"].device]
    with pytest.raises(rig.InvalidArgument, match='"A" is not DRIVER:N'):  # a name no device could have
        rig.load(path, [mine, "A"])
    with pytest.raises(TypeError, match="not 3"):
        rig.load(path, [mine, 3])


def test_paths_as_bytes_and_pathlike(tmp_path, weights, device):
    path, expected = weights
    for p in (path.encode(), tmp_path / "model.safetensors"):
        loaded = rig.load(p, device)
        assert loaded["embed.weight"].to_bytes() == expected["embed.weight"]
    with pytest.raises(rig.NotFound, match="missing.safetensors: No such file"):  # the path, not b'...'
        rig.load(str(tmp_path / "missing.safetensors").encode(), device)


def test_a_kept_pool_serves_two_loads(weights, device):
    path, expected = weights
    with rig.Pool(device, 1 << 20, 64 << 10) as pool:
        for _ in range(2):
            loaded = rig.load(path, device, path="staged", pools=[pool], chunk_bytes=64 << 10)
            assert loaded["layers.0.w"].to_bytes() == expected["layers.0.w"]


def test_onto_cuda(weights, cuda_device):
    path, expected = weights
    loaded = rig.load(path, cuda_device, chunk_bytes=64 << 10)
    for name, buf in loaded.items():
        assert buf.to_bytes() == expected[name], name
    assert loaded.stats["path"] in ("staged", "registered", "direct")


def test_a_kept_registration_serves_reloads(weights, cuda_device, device):
    path, expected = weights
    with rig.WeightsFile(path) as f:
        f.keep_registered(cuda_device)
        for _ in range(2):
            loaded = rig.load(f, cuda_device)
            assert loaded.stats["path"] == "registered" and "kept" in loaded.stats["why"]
            assert loaded["layers.3.w"].to_bytes() == expected["layers.3.w"]
        with pytest.raises(rig.Unsupported, match="Usable"):
            f.keep_registered(device)  # a memory device reads the mapping itself: nothing to keep
