#!/usr/bin/env python3
"""Issue 34's figures on one GPU: a `rig keep` process and clients in other processes, per checkpoint.

  - during the load: a client started before the keeper (torch imported, cuda:0 initialised, as an engine
    that restarts has them) attaches as soon as the socket exists, runs a kernel on tensor 0 (torch sum) and
    reports when it finished, against when the keeper logged its last tensor published;
  - attach time once loaded: rig.attach(socket, framework="pt", device="cuda:0") in a warm client, from the
    call to every tensor mapped as a torch.Tensor (goal: under 50 ms, the same for 4 and 16 GiB);
  - 1000 attach/detach cycles (rig.Attachment, tensor 0 mapped, closed): the keeper's resident set and the
    GPU's used memory before and after (goal: flat);
  - SIGTERM: the keeper's exit status once its clients let go.
ATTACH_FRAMEWORK (pt) picks rig.attach's framework; ATTACH_ONLY=1 leaves the cycles out; a client under the
counting interposer (RIG_CUDA_LIBRARY=.../libcountcuda.so) also prints the driver's IPC opens of its attaches.

Usage (GPU machine, rig's Python package importable): python3 bench/keep/attach.py RIG_BIN CHECKPOINT...
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

CLIENT = r"""
import os, sys, time, torch, rig
torch.cuda.init(); torch.empty(1, device="cuda:0"); torch.cuda.synchronize()
print("ready", flush=True)
sock, mode = sys.stdin.readline().split()
if mode == "first":
    t0 = time.time()
    a = rig.Attachment(sock, device="cuda:0")
    buf, _ = a.buffer(0)
    x = torch.from_dlpack(buf)          # rig's stream protocol: torch's stream waits for tensor 0's copy only
    s = x.sum()
    torch.cuda.synchronize()
    print("first", t0, time.time(), flush=True)
elif mode == "attach":
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        w = rig.attach(sock, framework=os.environ.get("ATTACH_FRAMEWORK", "pt"), device="cuda:0")
        times.append((time.perf_counter() - t0) * 1e3)
        n = len(w)
        del w
    # Under the counting interposer (RIG_CUDA_LIBRARY=libcountcuda.so): the driver's IPC opens of 5 attaches.
    counts = ""
    lib = os.environ.get("RIG_CUDA_LIBRARY", "")
    if "countcuda" in lib:
        import ctypes
        q = ctypes.CDLL(lib).rigcount_query
        q.restype, q.argtypes = ctypes.c_longlong, [ctypes.c_char_p]
        counts = " opens:memory=%d,event=%d" % (q(b"calls:ipc_open_memory"), q(b"calls:ipc_open_event"))
    print("attach", n, " ".join("%.2f" % t for t in times) + counts, flush=True)
elif mode == "cycles":
    for _ in range(1000):
        with rig.Attachment(sock, device="cuda:0") as a:
            buf, _ = a.buffer(0)
            buf.close()
    print("cycles", 1000, flush=True)
"""


def gpu_used_mib():
    if not shutil.which("nvidia-smi"):
        return -1
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                         capture_output=True, text=True)
    return int(out.stdout.split()[0]) if out.returncode == 0 else -1


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def client():
    p = subprocess.Popen([sys.executable, "-c", CLIENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def ask(p, sock, mode):
    p.stdin.write("%s %s\n" % (sock, mode))
    p.stdin.flush()
    line = p.stdout.readline().split()
    p.wait(timeout=120)
    return line


def one(rig_bin, path):
    name = os.path.basename(path)
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "keep.sock")
        first = client()  # warm before the keeper starts
        log = []
        keeper = subprocess.Popen([rig_bin, "keep", path, "--device", "cuda:0", "--socket", sock],
                                  stderr=subprocess.PIPE, text=True)
        t_start = time.time()

        def read_log():
            for line in keeper.stderr:
                log.append((time.time(), line.rstrip()))
        reader = threading.Thread(target=read_log, daemon=True)
        reader.start()
        while not os.path.exists(sock):
            if keeper.poll() is not None:
                print("%s: the keeper exited %d: %s" % (name, keeper.returncode, log[-3:]), flush=True)
                first.kill()
                return
            time.sleep(0.0005)
        t_ready = time.time()
        got = ask(first, sock, "first")
        deadline = time.time() + 120
        while not any("loaded" in line for _, line in log) and time.time() < deadline:
            time.sleep(0.005)
        loaded = [t for t, line in log if "loaded" in line]
        if got[:1] != ["first"] or not loaded:
            print("%s: first client %s, keeper log %s" % (name, got, log[-3:]), flush=True)
            return
        t_attach, t_kernel = float(got[1]), float(got[2])
        print("%s: socket ready %.0f ms after start; a client attached at %.0f ms and its kernel on tensor 0 "
              "finished at %.0f ms; the keeper's last tensor published at %.0f ms (%s)" % (
                  name, (t_ready - t_start) * 1e3, (t_attach - t_start) * 1e3, (t_kernel - t_start) * 1e3,
                  (loaded[0] - t_start) * 1e3, "before" if t_kernel < loaded[0] else "NOT before"), flush=True)
        got = ask(client(), sock, "attach")
        print("%s: rig.attach(framework=%r) of %s tensors, warm client: %s ms" % (
            name, os.environ.get("ATTACH_FRAMEWORK", "pt"), got[1], " ".join(got[2:])),
              flush=True)
        if not os.environ.get("ATTACH_ONLY"):  # ATTACH_ONLY=1: no cycles
            rss0, gpu0 = rss_kib(keeper.pid), gpu_used_mib()
            t0 = time.time()
            got = ask(client(), sock, "cycles")
            rss1, gpu1 = rss_kib(keeper.pid), gpu_used_mib()
            print("%s: %s attach/detach cycles in %.1f s: keeper resident %d -> %d KiB, GPU used %d -> %d MiB" % (
                name, got[1] if got else "no", time.time() - t0, rss0, rss1, gpu0, gpu1), flush=True)
        keeper.send_signal(signal.SIGTERM)
        rc = keeper.wait(timeout=60)
        print("%s: SIGTERM: keeper exit %d" % (name, rc), flush=True)


def main():
    rig_bin, paths = sys.argv[1], sys.argv[2:]
    for path in paths:
        one(rig_bin, path)


if __name__ == "__main__":
    main()
