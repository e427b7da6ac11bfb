#!/usr/bin/env bash
# Mapped registration on a real GPU (issue 3's "Show" on the H200). Usage: scripts/gpu/mapped.sh BUILD_DIR
# Runs from the repo root; writes logs under $OUT/mapped/. Every step has a timeout and a failing step does
# not stop the others; the summary at the end says which failed.
set -u
B=$(cd "${1:?usage: mapped.sh BUILD_DIR}" && pwd)
L=${OUT:-/tmp/out}/mapped
mkdir -p "$L"
export LD_LIBRARY_PATH="$B:${LD_LIBRARY_PATH:-}"   # librig and the carried libcmocka.so.0
S=$(mktemp -d "${TMPDIR:-/var/tmp}/rig-mapped.XXXXXX")
trap 'rm -rf "$S" /dev/shm/rig-mapped-tmpfs.bin' EXIT
summary=()
step() {  # step NAME LIMIT_S CMD...: runs CMD with a timeout, logs to $L/NAME.log, records rc
  local name=$1 limit=$2
  shift 2
  echo "== $name: $*" | tee -a "$L/all.log"
  local t0=$(date +%s.%N)
  timeout -k 5 "$limit" "$@" >"$L/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  cat "$L/$name.log" >>"$L/all.log"
  printf -v line '%-28s rc=%-3s %6.1f s' "$name" "$rc" "$(awk "BEGIN{print $t1 - $t0}")"
  echo "$line" | tee -a "$L/all.log"
  summary+=("$line")
}

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; \
  uname -r; stat -f -c 'scratch fs: %T' "$S"; } >"$L/machine.log" 2>&1

# The tools: built by meson in BUILD_DIR, else compiled here against its librig.
cxx=$(command -v g++ || command -v c++ || echo g++)
probe_tool=()
if [ -x "$B/tools/rig" ] && "$B/tools/rig" probe --help 2>&1 | grep -q 'usage: rig probe'; then
  probe_tool=("$B/tools/rig" probe)
elif [ -x "$B/bench/mapped/rig_probe_tool" ]; then
  probe_tool=("$B/bench/mapped/rig_probe_tool")  # its argv[0] stands for "probe"
else
  "$cxx" -std=c++20 -O2 -Iinclude -Itools -x c bench/mapped/probe_main.c tools/cli.c -x c++ tools/probe.cpp \
    -L"$B" -lrig -o "$S/rig_probe_tool" && probe_tool=("$S/rig_probe_tool")
fi
bench=$B/bench/mapped/bench_mapped_load
[ -x "$bench" ] || { "$cxx" -std=c++20 -O2 -Iinclude bench/mapped/load.cpp -L"$B" -lrig -lpthread -o "$S/bench" && bench=$S/bench; }

# 1. The mapped suite on the real driver (RIG_REQUIRE=cuda: a skip is a failure), and through the fake.
export RIG_REQUIRE=cuda
for t in test_mapped_probe_with test_mapped_static_table test_mapped_device_probe test_mapped_cuda_probe; do
  [ -x "$B/tests/mapped/$t" ] && step "suite-$t" 300 env -u RIG_CUDA_LIBRARY "$B/tests/mapped/$t"
done
fake=$(ls "$B"/tests/*/libfakecuda*.so 2>/dev/null | head -1)
if [ -n "$fake" ]; then
  step suite-fake-cuda 300 env RIG_CUDA_LIBRARY="$fake" "$B/tests/mapped/test_mapped_cuda_probe"
  step suite-probe-tool 300 env RIG_CUDA_LIBRARY="$fake" "$B/tests/mapped/test_mapped_probe_tool"
fi
unset RIG_REQUIRE

# 2. rig probe on real files (rc: 0 Usable or Not_needed, 3 Refused, 4 Too_slow, 5 Inconclusive; rig(1)).
dd if=/dev/urandom of="$S/1g.bin" bs=16M count=64 status=none && cat "$S/1g.bin" >/dev/null
step probe-1g-default 120 "${probe_tool[@]}" "$S/1g.bin" --device cuda:0 --verbose
step probe-1g-whole 120 "${probe_tool[@]}" "$S/1g.bin" --device cuda:0 --length 1G
step probe-1g-json 120 "${probe_tool[@]}" "$S/1g.bin" --device cuda:0 --json
step probe-64m 120 "${probe_tool[@]}" "$S/1g.bin" --device cuda:0 --length 64M
head -c 256M "$S/1g.bin" >/dev/shm/rig-mapped-tmpfs.bin 2>/dev/null && \
  step probe-tmpfs 120 "${probe_tool[@]}" /dev/shm/rig-mapped-tmpfs.bin --device cuda:0 --verbose
step probe-prot-none 120 "${probe_tool[@]}" "$S/1g.bin" --device cuda:0 --map none --length 64M
step probe-range-twice 120 "${probe_tool[@]}" "$S/1g.bin" --device cuda:0 --register-first --length 64M --verbose
# 3. Host-to-device GB/s from a 4 GiB file, every path, and the probe's wall time on 64 MiB.
step bench-load-4g 500 "$bench" "$S/4g.bin" --device cuda:0 --make-gib "${MAPPED_BENCH_GIB:-4}"
rm -f "$S/4g.bin"

# 4. Last, so that a child stuck in the driver cannot disturb the figures above. MAP_PRIVATE: the driver was seen never to return; the child-process path must answer within 10 s.
step probe-private-64m 60 "${probe_tool[@]}" "$S/1g.bin" --device cuda:0 --map private --length 64M --deadline 10 --verbose
step probe-private-1g 60 "${probe_tool[@]}" "$S/1g.bin" --device cuda:0 --map private --length 1G --deadline 10 --verbose

rm -f "$S/1g.bin"

echo "== summary" | tee -a "$L/all.log"
printf '%s\n' "${summary[@]}" | tee -a "$L/all.log"
