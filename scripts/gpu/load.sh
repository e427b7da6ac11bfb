#!/usr/bin/env bash
# The loader on a real GPU (issue 12's "Show"): bench/load on an 8 GiB safetensors file onto cuda:0 (and
# cuda:0,cuda:1 where there are two GPUs), `rig load` on it, and safetensors/torch as the peers, all in one
# run on one machine. Builds nothing: the carried build's librig, rig and bench_load are used (bench_load
# is compiled here against the carried librig only if the build was made without -Dbench=true).
# Usage (repository root, on the GPU machine): scripts/gpu/load.sh BUILD_DIR
# Writes one log per step under $OUT/load/ (NAME.log), all of them in order in $OUT/load/all.log, and the
# figures that matter in $OUT/load/summary.txt. Every step has a timeout; a failing step does not stop the
# others; the summary says which failed. LOAD_GIB (default 8) sets the file's size. LOAD_QUICK=1 runs only
# the warm bench, the kept-registration reloads and the probe (about two minutes on an H200); LOAD_STAGED=1
# adds the staged path's threads-by-chunk matrix.
set -u
B=$(cd "${1:?usage: scripts/gpu/load.sh BUILD_DIR}" && pwd)
L=${OUT:-/tmp/out}/load
mkdir -p "$L"
: >"$L/all.log"
export LD_LIBRARY_PATH="$B:${LD_LIBRARY_PATH:-}"
unset RIG_CUDA_LIBRARY   # the real libcuda, never a test's fake
GIB=${LOAD_GIB:-8}
S=$(mktemp -d /tmp/rig-load.XXXXXX)
F=$S/weights-${GIB}g.safetensors
SMALL=$S/weights-1g.safetensors
trap 'rm -rf "$S"' EXIT
summary=()
step() {  # step NAME LIMIT_S CMD...: runs CMD with a timeout, logs to $L/NAME.log, records rc and seconds
  local name=$1 limit=$2
  shift 2
  echo "== $name: $*" | tee -a "$L/all.log"
  local t0 t1 rc line
  t0=$(date +%s.%N)
  timeout -k 10 "$limit" "$@" >"$L/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  cat "$L/$name.log" >>"$L/all.log"
  printf -v line '%-22s rc=%-3s %7.1f s' "$name" "$rc" "$(awk "BEGIN{print $t1 - $t0}")"
  echo "$line" | tee -a "$L/all.log"
  summary+=("$line")
}

step machine 60 bash -c 'date -u; lscpu; nvidia-smi; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,memory.total --format=csv; nvidia-smi topo -m; uname -r; nproc; free -g; df -h /tmp; stat -f -c "fs of /tmp: %T" /tmp; python3 -c "import torch, safetensors; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"safetensors\", safetensors.__version__)"'
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
devices=cuda:0
[ "${gpus:-0}" -ge 2 ] && devices=cuda:0,cuda:1
echo "GPUs: ${gpus:-0}; devices for the bench: $devices" | tee -a "$L/all.log"

bench=$B/bench/load/bench_load
if [ ! -x "$bench" ]; then
  cxx=$(command -v g++ || command -v c++ || echo g++)
  step compile-bench 180 "$cxx" -std=c++20 -O2 -Iinclude bench/load/load_bench.cpp -L"$B" -lrig -lpthread -o "$S/bench_load"
  bench=$S/bench_load
fi
rig=$B/tools/rig

# 1. The files: GIB GiB for the figures, 1 GiB for the checked loads.
step make-file 300 "$bench" "$F" --make-gib "$GIB" --make-only
step make-small 120 "$bench" "$SMALL" --make-gib 1 --make-only
# Written back and read once before any timed load: run right after the file was written, `rig load`'s
# three loads ran at 25.6-35.1 GB/s with their readers' pread at 2.8 s summed (an H200, 2026-12-01), where
# after a sync and one read they ran at 46-53 with pread at 1.2-1.6 s.
step warm-file 300 bash -c "sync && cat '$F' '$SMALL' >/dev/null"

# 2. rig load as a user runs it: every path on 1 GiB with --verify (each chunk read back from the device
#    and its XXH3 compared with a pread of the file), then the big file with --json, three loads in one
#    process (the first pays the staging pool's making, the later ones reuse it).
quick=${LOAD_QUICK:-0}
[ "$quick" = 1 ] || for p in auto staged registered direct; do
  step "rig-verify-$p" 120 "$rig" load "$SMALL" --device cuda:0 --path "$p" --verify
done
[ "$quick" = 1 ] || step rig-load-json 240 "$rig" load "$F" --device cuda:0 --json --repeat 3
# a registration kept across loads (rig_load_file_keep_registered): the first load pays for it, the later
# ones copy from it
step rig-load-kept-json 240 "$rig" load "$F" --device cuda:0 --json --repeat 4 --keep-registered
# LOAD_STAGED=1: the staged path over reader threads and chunk sizes, three loads each through one pool,
# with the threads' phases (read, staging wait, buffer making, submit) in each load's JSON
# (LOAD_STAGED_THREADS, LOAD_STAGED_CHUNKS and LOAD_STAGED_BUDGETS change the matrix's lists)
if [ "${LOAD_STAGED:-0}" = 1 ]; then
  for t in ${LOAD_STAGED_THREADS:-8 16}; do for c in ${LOAD_STAGED_CHUNKS:-4M 8M}; do for b in ${LOAD_STAGED_BUDGETS:-256M}; do
    step "staged-t$t-c$c-b$b" 60 "$rig" load "$F" --device cuda:0 --path staged --threads "$t" --chunk "$c" --staging "$b" --json --repeat 3
  done; done; done
fi
# LOAD_AB_LIB=DIR: a before/after of the library on the same machine in the same minute: `rig load` with
# its defaults (three loads in a process: the first makes the pool) through DIR's librig.so.0 (before) and
# the carried one (after), interleaved four times
if [ -n "${LOAD_AB_LIB:-}" ]; then
  ab=$(cd "$LOAD_AB_LIB" && pwd)
  for r in 1 2 3 4; do
    step "ab-before-$r" 60 env LD_LIBRARY_PATH="$ab:$LD_LIBRARY_PATH" "$rig" load "$F" --device cuda:0 --path staged --json --repeat 3
    step "ab-after-$r" 60 "$rig" load "$F" --device cuda:0 --path staged --json --repeat 3
  done
fi
# the probe's own cost on a 64 MiB region, phase by phase (goal: under 50 ms)
step probe-64m 60 "$rig" probe --device cuda:0 --length 64M --verbose "$SMALL"
[ "$quick" != 1 ] && [ "$devices" != cuda:0 ] && step rig-load-pair-json 240 "$rig" load "$F" --device "$devices" --rule layer --json --repeat 3

# 3. The bench: every path beside the link and a pread loader, warm and cold; the pair where there is one.
if [ "$quick" = 1 ]; then step bench 300 "$bench" "$F" --device cuda:0 --no-cold
else step bench 480 "$bench" "$F" --device "$devices"; fi

# 4. The peers in Python: safetensors.torch.load_file(device="cuda:0"), and the file's mapping as torch
#    tensors (torch.frombuffer over mmap) then .to("cuda:0"), warm (best of 3) and cold (evicted first), each timed from the call to
#    torch.cuda.synchronize() in a process where CUDA is already initialised.
cat >"$S/peer.py" <<'PY'
import json, mmap, os, sys, time, warnings
import torch
import safetensors.torch as st
warnings.filterwarnings("ignore")  # torch.frombuffer on a read-only mapping warns that it is not writable
path, mode = sys.argv[1], sys.argv[2]
size = os.path.getsize(path)
torch.zeros(1, device="cuda:0"); torch.cuda.synchronize()   # CUDA initialised outside the timing
def evict():
    fd = os.open(path, os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
def once(fn):
    t = time.perf_counter(); d = fn(); torch.cuda.synchronize(); s = time.perf_counter() - t
    del d; torch.cuda.empty_cache(); return s
def mapped_to_cuda():  # the file's shared mapping as torch tensors (bytes), each .to("cuda:0")
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little"); header = json.loads(f.read(n))
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    out = {}
    for k, v in header.items():
        if k == "__metadata__": continue
        a, b = v["data_offsets"]
        out[k] = torch.frombuffer(mm, dtype=torch.uint8, count=b - a, offset=8 + n + a).to("cuda:0")
    return out
runs = {
    "safetensors.load_file(device=cuda:0)": lambda: st.load_file(path, device="cuda:0"),
    "torch.frombuffer(mmap) + .to(cuda:0)": mapped_to_cuda,
}
for name, fn in runs.items():
    if mode == "cold":
        evict(); s = once(fn)
    else:
        once(fn)  # brings the file into the page cache
        s = min(once(fn) for _ in range(3))
    print(f"PEER {mode:4s} {name:40s} {size / s / 1e9:8.2f} GB/s {s:8.3f} s", flush=True)
PY
[ "$quick" = 1 ] || step safetensors-warm 300 python3 "$S/peer.py" "$F" warm
[ "$quick" = 1 ] || step safetensors-cold 300 python3 "$S/peer.py" "$F" cold
# As a user types it: the whole process, import and CUDA start included (the step's own seconds).
[ "$quick" = 1 ] || step safetensors-oneliner 300 python3 -c 'import sys, safetensors.torch as st, torch; st.load_file(sys.argv[1], device="cuda:0"); torch.cuda.synchronize()' "$F"

{
  echo "== summary ($(date -u), $devices, ${GIB} GiB file)"
  printf '%s\n' "${summary[@]}"
  echo "-- bench rows and goals"
  grep -E '^(==|  [a-z]|bench_load|SKIP)' "$L/bench.log" 2>/dev/null | cut -c1-160
  echo "-- peers"
  cat "$L"/safetensors-warm.log "$L"/safetensors-cold.log 2>/dev/null | grep '^PEER'
  echo "-- rig load"
  for f in "$L"/rig-verify-*.log; do echo "$(basename "$f" .log): $(grep -E '^(speed|path)' "$f" | tr '\n' ' ')$(grep -m1 'rig load:' "$f")"; done
  grep -h 'phases' "$L"/probe-64m.log 2>/dev/null
  grep -h '"gb_per_s"' "$L"/rig-load-kept-json.log "$L"/rig-load-json.log "$L"/rig-load-pair-json.log 2>/dev/null | head -c 3000
} | tee "$L/summary.txt" | tee -a "$L/all.log"
