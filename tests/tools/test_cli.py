#!/usr/bin/env python3
"""The rig command's manners, run as a user runs it: --help and -h to stdout with status 0, --version,
--opt=value, devices --json and probe --json checked against docs/cli-json.schema.json (also for a file
name that is not UTF-8), one device naming (what `devices` lists, `probe --device` takes), the documented
exit statuses, clear errors for a directory or an empty file, the progress line on a terminal only; and
`rig load`: its usage errors, a small safetensors file onto memory devices (and every device listed, and
two fake GPUs), --json against the schema, bad files answered with status 1 and words.

    test_cli.py RIG SCHEMA [FAKE_LIBCUDA]
"""
import json
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

RIG, SCHEMA_PATH = sys.argv[1], sys.argv[2]
FAKE_CUDA = sys.argv[3] if len(sys.argv) > 3 else ""
SCHEMA = json.load(open(SCHEMA_PATH))
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def run(*args, env=None):
    """Runs rig with args (str or bytes), returns (status, stdout bytes, stderr text)."""
    e = dict(os.environ)
    e.pop("RIG_CUDA_LIBRARY", None)
    e.update(env or {})
    p = subprocess.run([RIG, *args], capture_output=True, env=e, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def special_files(where):
    """A FIFO, a bound UNIX socket and a device node: (what, path, the word rig names it by), and the
    socket to close. Opening the FIFO for reading would wait for a writer, reading /dev/zero never ends."""
    import socket
    fifo, sock = os.path.join(where, "fifo"), os.path.join(where, "sock")
    for p in (fifo, sock):
        if os.path.lexists(p):
            os.unlink(p)
    os.mkfifo(fifo)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(sock)
    return [("a FIFO", fifo, "FIFO"), ("a UNIX socket", sock, "socket"), ("/dev/null", "/dev/null", "device"),
            ("/dev/zero", "/dev/zero", "device")], s


def run_briefly(*args):
    """run() for a case that must answer at once: a rig that blocks fails the check instead of the suite."""
    try:
        p = subprocess.run([RIG, *args], capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return None, b"", "timed out after 20 s: blocked"
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


# ---- a small validator for the subset of JSON Schema the schema file uses --------------------------------
def resolve(node):
    ref = node.get("$ref")
    if ref:
        node = SCHEMA
        for part in ref.lstrip("#/").split("/"):
            node = node[part]
    return node


def type_ok(value, t):
    return {
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "null": value is None,
    }[t]


def errors(value, node, where="$"):
    node = resolve(node)
    if "oneOf" in node:
        matching = [s for s in node["oneOf"] if not errors(value, s, where)]
        return [] if len(matching) == 1 else [f"{where}: matches {len(matching)} of oneOf"]
    found = []
    types = node.get("type")
    if types is not None:
        types = types if isinstance(types, list) else [types]
        if not any(type_ok(value, t) for t in types):
            return [f"{where}: {value!r} is not {types}"]
    if "enum" in node and value not in node["enum"]:
        found.append(f"{where}: {value!r} not in {node['enum']}")
    if "minimum" in node and isinstance(value, (int, float)) and value < node["minimum"]:
        found.append(f"{where}: {value} < {node['minimum']}")
    if isinstance(value, dict):
        for k in node.get("required", []):
            if k not in value:
                found.append(f"{where}: missing {k}")
        props = node.get("properties", {})
        for k, v in value.items():
            if k in props:
                found += errors(v, props[k], f"{where}.{k}")
            elif node.get("additionalProperties") is False:
                found.append(f"{where}: unexpected {k}")
            elif isinstance(node.get("additionalProperties"), dict):
                found += errors(v, node["additionalProperties"], f"{where}.{k}")
    if isinstance(value, list) and "items" in node:
        for i, v in enumerate(value):
            found += errors(v, node["items"], f"{where}[{i}]")
    return found


def valid(out, defn, what):
    """Strict UTF-8, JSON, and the schema's $defs/defn. Returns the object or None."""
    try:
        obj = json.loads(out.decode("utf-8", "strict"))
    except (UnicodeDecodeError, ValueError) as e:
        check(False, f"{what}: output is UTF-8 JSON ({e})")
        return None
    errs = errors(obj, {"$ref": f"#/$defs/{defn}"}) + errors(obj, SCHEMA)
    check(not errs, f"{what}: matches the schema's {defn}" + ("" if not errs else f" ({errs[:3]})"))
    return obj


# ---- help, version, usage -------------------------------------------------------------------------------
for args in (["--help"], ["-h"], ["help"], ["devices", "--help"], ["devices", "-h"], ["demo", "--help"],
             ["probe", "--help"], ["probe", "-h"], ["load", "--help"], ["load", "-h"]):
    rc, out, err = run(*args)
    check(rc == 0 and b"usage: rig" in out and err == "", f"rig {' '.join(args)}: usage on stdout, status 0")
rc, out, err = run("--version")
check(rc == 0 and re.fullmatch(rb"rig \S+ \(librig \S+\)\n", out) is not None, f"rig --version: {out!r}")
for args in ([], ["nosuch"], ["--nosuch"], ["devices", "--nosuch"], ["devices", "extra"], ["probe"], ["load"],
             ["load", "w.safetensors"], ["load", "--device", "memory:A"], ["load", "--nosuch", "w", "--device", "memory:A"],
             ["load", "--path", "fast", "w", "--device", "memory:A"], ["load", "--threads", "x", "w", "--device", "memory:A"],
             ["load", "--chunk", "-1", "w", "--device", "memory:A"], ["load", "a", "b", "--device", "memory:A"],
             ["load", "w", "--device"]):
    rc, out, err = run(*args)
    check(rc == 2 and out == b"" and err != "", f"rig {' '.join(args)}: usage error on stderr, status 2")
rc, out, err = run("demo")
check(rc == 0 and out == b"hello, world\n", "rig demo prints hello, world")

# ---- devices, and one naming ----------------------------------------------------------------------------
rc, out, err = run("devices")
check(rc == 0 and b"memory:NAME" in out, "rig devices lists memory:NAME")
rc, out, err = run("devices", "--json")
devices = valid(out, "devices", "rig devices --json") if rc == 0 else None
check(rc == 0, "rig devices --json: status 0")
names = [d["name"] for d in (devices or {}).get("devices", []) if d["opened"]]
check("memory:NAME" in names, "devices --json lists memory:NAME")
# A backend that lists nothing says why: here CUDA's library at a path that does not exist.
missing = "/nonexistent/libcuda-for-rig-test.so.1"
rc, out, err = run("devices", "--json", env={"RIG_CUDA_LIBRARY": missing})
gone = valid(out, "devices", "rig devices --json, CUDA's library missing") if rc == 0 else None
why = [u["error"] for u in (gone or {}).get("unavailable", []) if u["backend"] == "cuda"]
check(rc == 0 and len(why) == 1 and missing in why[0], "devices --json: a missing CUDA library is named under unavailable")
rc, out, err = run("devices", env={"RIG_CUDA_LIBRARY": missing})
check(rc == 0 and b"no device from:" in out and missing.encode() in out, "rig devices: says why CUDA lists no device")

work = tempfile.mkdtemp(prefix="rig-cli-")
data = os.path.join(work, "weights.bin")
with open(data, "wb") as f:
    f.write(os.urandom(3 << 20))

for name in names:
    device = name.replace("memory:NAME", "memory:A")
    rc, out, err = run("probe", "--json", "--device", device, data)
    obj = valid(out, "probe", f"probe --json --device {device}")
    if obj is None:
        continue
    check(obj["exit_code"] == rc, f"probe --device {device}: exit_code {obj['exit_code']} is the status {rc}")
    check(obj["device"] == device, f"probe --device {device}: the device it names is the one listed")
    check(isinstance(obj["static"], dict), f"probe --device {device}: static is an object")
    kind = obj["verdict"]["kind"]
    want = {"Usable": 0, "Not_needed": 0, "Refused": 3, "Too_slow": 4, "Inconclusive": 5, "Still_registered": 6}
    check(kind in want and want[kind] == rc, f"probe --device {device}: {kind} exits {rc}")
    for part in ("static", "verdict"):
        reason = obj[part]["reason"]
        check(re.search(r"#\d", reason) is None, f"probe --device {device}: {part} reason in rig's words: {reason}")
rc, out, err = run("probe", "--device", "memory", data)
check(rc == 1 and "memory" in err, "probe --device memory (no name) is refused: memory devices are memory:NAME")

# --opt=value and --opt value agree
rc, out, err = run("probe", "--json", "--device=memory:A", "--length=4K", "--offset=4096", data)
obj = valid(out, "probe", "probe --device=memory:A --length=4K --offset=4096")
check(rc == 0 and obj is not None and obj["length"] == 4096 and obj["offset"] == 4096, "--opt=value is read")

# ---- names that are not UTF-8, and names JSON must escape -----------------------------------------------
for raw in (b"w\xff\xfe-latin\xe9.bin", b'q"uo\\te\nline\x01.bin', "ünï-😀.bin".encode()):
    path = os.path.join(work.encode(), raw)
    with open(path, "wb") as f:
        f.write(os.urandom(8192))
    rc, out, err = run("probe", "--json", "--device", "memory:A", path)
    obj = valid(out, "probe", f"probe --json on the name {raw!r}")
    if obj is not None:
        check(bytes.fromhex(obj["file_hex"]) == path, f"{raw!r}: file_hex gives the exact bytes")
        check(obj["file"] == path.decode("utf-8", "replace"), f"{raw!r}: file is the name, bad bytes as U+FFFD")
    os.unlink(path)

# ---- what cannot be probed -----------------------------------------------------------------------------
rc, out, err = run("probe", "--device", "memory:A", work)
check(rc == 1 and "directory" in err and "--offset" not in err and b"verdict" not in out,
      f"a directory: status 1, said so ({err.strip()})")
empty = os.path.join(work, "empty")
open(empty, "wb").close()
rc, out, err = run("probe", "--device", "memory:A", empty)
check(rc == 1 and "empty" in err and "--offset" not in err, f"an empty file: status 1, said so ({err.strip()})")
rc, out, err = run("probe", "--device", "memory:A", os.path.join(work, "missing"))
check(rc == 1 and "No such file" in err, "a missing file: status 1")
specials, bound = special_files(work)
for what, path, word in specials:
    rc, out, err = run_briefly("probe", "--device", "memory:A", path)
    check(rc == 1 and word in err and "regular file" in err and b"verdict" not in out,
          f"probe of {what}: refused at once, status 1, said what it is ({err.strip()})")
bound.close()
rc, out, err = run("probe", "--device", "memory:A", "--offset", "100", data)
check(rc == 2 and "page" in err, "an offset off a page: usage error")

# ---- the default device: a GPU, or an error that says there is none ------------------------------------
rc, out, err = run("probe", "--json", data)
obj = valid(out, "probe", "probe --json with no --device")
if obj is not None:
    gpus = [d["name"] for d in devices["devices"] if d["kind"] == "gpu"] if devices else []
    if gpus:
        check(obj["device"] in gpus, f"no --device: a GPU is chosen ({obj['device']})")
    else:
        check(rc == 1 and obj["device"] is None and "no GPU" in (obj["error"] or ""),
              f"no --device and no GPU: an error naming what is there ({obj['error']})")

# ---- the progress line: on a terminal, for work over a second; never in a pipe -------------------------
if FAKE_CUDA:
    env = dict(os.environ, RIG_CUDA_LIBRARY=FAKE_CUDA, FAKECUDA_REGISTERED_UPLOAD_NS_PER_KIB="100000000")
    args = [RIG, "probe", "--device", "cuda:0", "--deadline", "2.5", data]
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    start = time.time()
    while time.time() - start < 30:
        r, _, _ = select.select([master], [], [], 0.5)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif p.poll() is not None:
            break
    p.wait(timeout=30)
    os.close(master)
    p.stdout.read()
    check(p.returncode == 5, f"a deadline passed: Inconclusive, status 5 (got {p.returncode})")
    check(b"\r\x1b[K" in seen and b"rig probe: cuda:0" in seen, f"a terminal gets a progress line ({seen[:120]!r})")
    q = subprocess.run(args, capture_output=True, env=env, timeout=60)
    check(b"\r" not in q.stderr, "a pipe gets no progress line")
else:
    print("skip  the progress line: no fake libcuda given")

# ---- rig load: a small safetensors file onto memory devices ----------------------------------------------
def safetensors(path, tensors, header_len=None, cut=None):
    """Writes a safetensors file of tensors [(name, dtype, shape, bytes)]; header_len overrides the length
    field, cut truncates the file. Returns the data's total size."""
    header, offset = {}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    blob = (header_len if header_len is not None else len(h)).to_bytes(8, "little") + h + b"".join(t[3] for t in tensors)
    with open(path, "wb") as f:
        f.write(blob[:cut] if cut is not None else blob)
    return offset


def holed(path, ranges, data_len):
    """A safetensors file of U8 tensors at the given data_offsets over data_len bytes, holes and all."""
    header = {f"t{i}": {"dtype": "U8", "shape": [b - a], "data_offsets": [a, b]} for i, (a, b) in enumerate(ranges)}
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + os.urandom(data_len))


weights = os.path.join(work, "small.safetensors")
small = [("model.layers.0.w", "F32", [256, 256], os.urandom(256 * 256 * 4)),
         ("model.layers.1.w", "BF16", [512, 1024], os.urandom(512 * 1024 * 2)),
         ("model.norm", "F16", [7], os.urandom(14))]
total = safetensors(weights, small)

rc, out, err = run("load", weights, "--device", "memory:A")
check(rc == 0 and f"{len(small)} tensors".encode() in out and b"path        direct" in out and b"GB/s" in out
      and err == "", f"rig load onto memory:A: status 0, tensors, path and speed reported ({out[:80]!r} {err.strip()})")

rc, out, err = run("load", "--json", "--device=memory:A,memory:B", weights)
obj = valid(out, "load", "rig load --json onto memory:A,memory:B") if rc == 0 else None
check(rc == 0 and err == "", f"rig load --json onto two memory devices: status 0 ({err.strip()})")
if obj is not None:
    run1 = obj["loads"][0] if obj["loads"] else {}
    check(obj["tensors"] == len(small) and obj["devices"] == ["memory:A", "memory:B"] and obj["error"] is None
          and len(obj["loads"]) == 1, f"load --json: tensors, devices, one load, no error ({obj['tensors']}, {obj['devices']})")
    # read once: the direct path maps whole pages, so the count may round out to the pages around the data
    check(run1.get("bytes") == total and total <= run1.get("bytes_read", 0) < total + 2 * 65536
          and run1.get("bytes_copied") == 2 * total, f"every tensor on both devices: {total} bytes, read once, copied twice ({run1})")
    check(run1.get("path") == "direct" and "Not_needed" in run1.get("why", ""),
          f"memory devices read the mapping: path direct, why names the verdict ({run1.get('why')})")
    check(bytes.fromhex(obj["file_hex"]) == weights.encode(), "load --json: file_hex gives the exact name")

# --split: layer 1's BF16 [512, 1024] by columns, layer 0's F32 [256, 256] by rows; the norm whole on both
rc, out, err = run("load", "--json", "--device=memory:A,memory:B", "--split", "*.1.w:1", "--split", "model.layers.?.w:0",
                   weights)
obj = valid(out, "load", "rig load --json --split onto memory:A,memory:B") if rc == 0 else None
check(rc == 0 and err == "", f"rig load --split onto two memory devices: status 0 ({err.strip()})")
if obj is not None and obj["loads"]:
    run1 = obj["loads"][0]
    half = (256 * 256 * 4 + 512 * 1024 * 2) // 2
    check(run1.get("device_bytes") == [half + 14, half + 14] and run1.get("bytes") == total
          and run1.get("bytes_read") == total and run1.get("bytes_copied") == total + 14 and run1.get("path") == "staged",
          f"--split: each device holds half of each split tensor and the norm, every byte read once, staged ({run1})")
rc, out, err = run("load", "--device=memory:A,memory:B", "--split", "model.norm", weights)
check(rc == 2 and "PATTERN:DIM" in err, f"--split without a dim is a usage error ({rc}, {err.strip()})")
rc, out, err = run("load", "--device=memory:A,memory:B", "--split", "model.norm:1", weights)
check(rc == 1 and "model.norm" in err and "past its rank" in err, f"--split past the rank names the tensor ({err.strip()})")

rc, out, err = run("load", "--json", "--device=memory:A,memory:A", weights)
obj = valid(out, "load", "rig load --json onto memory:A twice")
check(rc == 1 and obj is not None and "named twice" in (obj["error"] or "") and obj["loads"] == [],
      f"a device named twice is refused before anything loads ({obj and obj['error']})")

rc, out, err = run("load", "--json", "--path", "staged", "--verify", "--repeat", "2", "--chunk", "64K", "--device",
                   "memory:A", weights)
obj = valid(out, "load", "rig load --json --path staged --verify --repeat 2") if rc == 0 else None
check(rc == 0, f"staged, verified, twice: status 0 ({err.strip()})")
if obj is not None:
    check(len(obj["loads"]) == 2 and all(l["path"] == "staged" and l["verified"] and l["staging_bytes"] > 0
                                         and l["bytes_read"] == total for l in obj["loads"]),
          f"two staged loads, verified, through pinned staging ({obj['loads']})")

# RIG_LOAD_TRACE=1: each load's milestones on stderr, once each, in order of time, from the start's call
rc, out, err = run("load", "--path", "staged", "--repeat", "2", "--device", "memory:A", weights,
                   env={"RIG_LOAD_TRACE": "1"})
marks = [line.split("ms  ", 1) for line in err.splitlines() if line.startswith("rig load trace:")]
traced = [m[1] for m in marks if len(m) == 2]
times = [float(m[0].split(":")[1]) for m in marks if len(m) == 2]
want = ["planned", "staging made", "running", "first chunk read", "first buffer made", "first copy submitted",
        "first tensor handed out", "all copies submitted", "done", "staging released"]
first = traced[:len(want)]
check(rc == 0 and len(traced) == 2 * len(want) and sorted(first) == sorted(want) and first[0] == "planned"
      and first.index("first tensor handed out") < first.index("done") and first.index("done") < first.index("staging released")
      and all(t >= 0 for t in times), f"RIG_LOAD_TRACE=1: every milestone once a load, in order ({traced[:4]}...)")
rc, out, err = run("load", "--device", "memory:A", weights, env={"RIG_LOAD_TRACE": "0"})
check(rc == 0 and "rig load trace" not in err, "RIG_LOAD_TRACE=0: nothing traced")

# a name that is not UTF-8, and one JSON must escape: file as U+FFFD, file_hex exact
for raw in (b"w\xff-latin\xe9.safetensors", b'q"uo\\te\nline.safetensors'):
    odd = os.path.join(work.encode(), raw)
    with open(weights, "rb") as src, open(odd, "wb") as dst:
        dst.write(src.read())
    rc, out, err = run("load", "--json", "--device", "memory:A", odd)
    obj = valid(out, "load", f"rig load --json on the name {raw!r}")
    check(rc == 0 and obj is not None and bytes.fromhex(obj["file_hex"]) == odd
          and obj["file"] == odd.decode("utf-8", "replace"), f"{raw!r}: loaded, file_hex exact, file with U+FFFD")
    os.unlink(odd)

# every device this machine opens (lavapipe's vulkan:0 where installed), checked byte for byte
for name in names:
    device = name.replace("memory:NAME", "memory:A")
    rc, out, err = run("load", "--json", "--verify", "--device", device, weights)
    obj = valid(out, "load", f"rig load --json --verify --device {device}")
    loads = obj["loads"] if obj else []
    check(rc == 0 and len(loads) == 1 and loads[0]["verified"] and loads[0]["bytes_copied"] == total,
          f"rig load --verify onto {device}: every byte checked ({err.strip()[:120]})")

# the fake libcuda: staged and registered paths through the command, two GPUs, every byte checked
if FAKE_CUDA:
    for path in ("staged", "registered", "auto"):
        rc, out, err = run("load", "--json", "--verify", "--path", path, "--device", "cuda:0,cuda:1", weights,
                           env={"RIG_CUDA_LIBRARY": FAKE_CUDA})
        obj = valid(out, "load", f"rig load --path {path} onto the fake cuda:0,cuda:1")
        l = obj["loads"][0] if obj and obj["loads"] else {}
        want = "staged" if path == "auto" else path
        check(rc == 0 and l.get("path") == want and l.get("verified") and l.get("bytes_copied") == 2 * total,
              f"--path {path} onto two fake GPUs: path {l.get('path')}, verified, copied to both ({err.strip()[:120]})")
    rc, out, err = run("load", "--json", "--verify", "--keep-registered", "--repeat", "3", "--device", "cuda:0", weights,
                       env={"RIG_CUDA_LIBRARY": FAKE_CUDA})
    obj = valid(out, "load", "rig load --keep-registered --repeat 3 onto the fake cuda:0")
    loads = obj["loads"] if obj else []
    check(rc == 0 and len(loads) == 3 and all(l.get("path") == "registered" and "kept" in l.get("why", "")
                                              and l.get("verified") for l in loads),
          f"--keep-registered: three loads from the kept registration, verified ({err.strip()[:120]})")
else:
    print("skip  rig load onto the fake libcuda: none given")
rc, out, err = run("load", "--keep-registered", "--device", "memory:A", weights)
check(rc == 1 and out == b"" and "keep-registered" in err and "Usable" in err,
      f"--keep-registered onto a memory device: status 1, the verdict in words ({err.strip()})")

rc, out, err = run("load", "--path", "registered", "--device", "memory:A", weights)
check(rc == 1 and out == b"" and "Usable" in err and "Not_needed" in err,
      f"registered onto a memory device: status 1, the verdict in words ({err.strip()})")

# bad files: status 1, words on stderr, nothing on stdout; with --json, the error in the object
bad = os.path.join(work, "bad.safetensors")
cases = [("truncated", lambda: open(bad, "wb").write(b"\x10\x00\x00")),
         ("header length past the end", lambda: safetensors(bad, small, header_len=1 << 40)),
         ("file cut inside its header", lambda: safetensors(bad, small, cut=8 + 100)),
         ("tensor data cut short", lambda: safetensors(bad, small, cut=8 + 256 + 256 * 256 * 4)),
         ("not JSON", lambda: open(bad, "wb").write((16).to_bytes(8, "little") + b"{not json at all")),
         ("dtype and shape against the byte range", lambda: safetensors(bad, [("w", "F32", [3, 3], os.urandom(32))])),
         ("bytes after the last tensor", lambda: (safetensors(bad, small), open(bad, "ab").write(b"tail"))),
         ("a hole between tensors", lambda: holed(bad, [[0, 16], [20, 36]], 36)),
         ("a gap before the first tensor", lambda: holed(bad, [[8, 24], [24, 40]], 40))]
for what, make in cases[-3:]:
    make()
    rc, out, err = run("load", bad, "--device", "memory:A")
    check(rc == 1 and re.search(r"\[\d+, \d+\)|ends at \d+", err) is not None,
          f"{what}: the offsets said ({err.strip()[:160]})")
for what, make in cases:
    make()
    rc, out, err = run("load", bad, "--device", "memory:A")
    check(rc == 1 and out == b"" and "RIG_INVALID_ARGUMENT" in err and len(err.split()) > 4,
          f"{what}: status 1 with words ({err.strip()[:140]})")
    rc, out, err = run("load", "--json", bad, "--device", "memory:A")
    obj = valid(out, "load", f"{what}: --json")
    check(rc == 1 and obj is not None and obj["loads"] == [] and "RIG_INVALID_ARGUMENT" in (obj["error"] or ""),
          f"{what}: --json says the error, status 1")
rc, out, err = run("load", os.path.join(work, "missing.safetensors"), "--device", "memory:A")
check(rc == 1 and "No such file" in err, f"a missing file: status 1 ({err.strip()})")
# a directory is a checkpoint's only where it holds one: this one holds several
rc, out, err = run("load", work, "--device", "memory:A")
check(rc == 1 and "checkpoints" in err and "name the one to open" in err, f"a directory of several checkpoints: status 1 ({err.strip()})")
specials, bound = special_files(work)
for what, path, word in specials:
    rc, out, err = run_briefly("load", path, "--device", "memory:A")
    check(rc == 1 and word in err and "regular file" in err and out == b"",
          f"load of {what}: refused at once, status 1, said what it is ({err.strip()})")
bound.close()
rc, out, err = run("load", weights, "--device", "nosuch:0")
check(rc == 1 and "nosuch:0" in err, f"a device that does not exist: status 1, named ({err.strip()})")
os.unlink(bad)

# ---- rig info: a sharded checkpoint's files, tensors and metadata, no device -------------------------------
for args in (["info", "--help"], ["info", "-h"]):
    rc, out, err = run(*args)
    check(rc == 0 and b"usage: rig info" in out and err == "", f"rig {' '.join(args)}: usage on stdout, status 0")
for args in (["info"], ["info", "a", "b"], ["info", "--nosuch", "a"], ["info", "--json=1", "a"]):
    rc, out, err = run(*args)
    check(rc == 2 and out == b"" and err != "", f"rig {' '.join(args)}: usage error on stderr, status 2")

ckpt = os.path.join(work, "ckpt")
os.mkdir(ckpt)
named = [(f"model.layers.{i}.w", "BF16", [3, 5 + i], os.urandom(2 * 3 * (5 + i))) for i in range(8)]
weight_map = {}
for k in range(4):
    shard = f"model-{k + 1:05d}-of-00004.safetensors"
    safetensors(os.path.join(ckpt, shard), named[2 * k:2 * k + 2])
    weight_map.update({t[0]: shard for t in named[2 * k:2 * k + 2]})
index = os.path.join(ckpt, "model.safetensors.index.json")
with open(index, "w") as f:
    json.dump({"metadata": {"total_size": sum(len(t[3]) for t in named)}, "weight_map": weight_map}, f)
for target in (ckpt, index):
    rc, out, err = run("info", "--json", target)
    obj = valid(out, "info", f"rig info --json {os.path.basename(target)}")
    check(rc == 0 and err == "", f"rig info --json of a 4-shard checkpoint: status 0 ({err.strip()})")
    if obj:
        by_name = {t[0]: t for t in named}
        same = len(obj["tensors"]) == 8 and len(obj["shards"]) == 4 and obj["format"] == "safetensors"
        for t in obj["tensors"]:
            with open(obj["shards"][t["shard"]]["path"], "rb") as f:
                f.seek(t["offset"])
                same = same and f.read(t["length"]) == by_name[t["name"]][3] and t["shape"] == by_name[t["name"]][2]
        check(same and obj["total_bytes"] == sum(len(t[3]) for t in named) and obj["error"] is None
              and obj["metadata"] == {"total_size": str(obj["total_bytes"])},
              "rig info --json: each tensor's shard and byte range hold its bytes; total and metadata")
rc, out, err = run("load", "--json", "--verify", "--path", "staged", "--chunk", "64K", "--device", "memory:A", ckpt)
obj = valid(out, "load", "rig load --json of a 4-shard checkpoint's directory")
check(rc == 0 and obj is not None and obj["tensors"] == 8 and len(obj["loads"]) == 1 and obj["loads"][0]["verified"]
      and obj["loads"][0]["bytes"] == sum(len(t[3]) for t in named), f"rig load --verify of a 4-shard checkpoint ({err.strip()})")
rc, out, err = run("info", ckpt)
check(rc == 0 and b"model.layers.7.w  BF16  [3,12]  3" in out and b"in 4 files" in out, f"rig info in words ({out[:200]!r})")
os.unlink(os.path.join(ckpt, "model-00002-of-00004.safetensors"))
rc, out, err = run("info", "--json", index)
obj = valid(out, "info", "rig info --json of a checkpoint missing a shard")
check(rc == 1 and obj is not None and "model-00002-of-00004.safetensors" in (obj["error"] or "") and obj["tensors"] == [],
      f"a missing shard: status 1, the error names it ({obj and obj['error']})")
odd = os.path.join(work, "odd").encode() + b"\xff.safetensors"
safetensors(odd, small)
rc, out, err = run("info", "--json", odd)
obj = valid(out, "info", "rig info --json of a file whose name is not UTF-8")
check(rc == 0 and obj is not None and bytes.fromhex(obj["file_hex"]) == odd and len(obj["tensors"]) == 3,
      "rig info --json: file_hex gives a name that is not UTF-8 exactly")
os.unlink(odd)
for f in os.listdir(ckpt):
    os.unlink(os.path.join(ckpt, f))
os.rmdir(ckpt)

# the progress line: on a terminal only
master, slave = pty.openpty()
p = subprocess.Popen([RIG, "load", weights, "--device", "memory:A"], stdout=subprocess.PIPE, stderr=slave)
os.close(slave)
seen = b""
while True:
    r, _, _ = select.select([master], [], [], 5)
    if not r:
        break
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
p.wait(timeout=60)
os.close(master)
p.stdout.read()
check(p.returncode == 0 and b"\r\x1b[K" in seen and b"rig load:" in seen and b"GB/s" in seen,
      f"rig load on a terminal: a progress line ({seen[:100]!r})")
q = subprocess.run([RIG, "load", weights, "--device", "memory:A"], capture_output=True, timeout=60)
check(q.returncode == 0 and q.stderr == b"", "rig load in a pipe: no progress line")

for f in os.listdir(work):
    os.unlink(os.path.join(work, f))
os.rmdir(work)
print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
