#!/bin/sh
# rig keep and rig attach as a user runs them: a keeper in the background, ready once its socket exists;
# --list and --verify against it; a file that differs makes --verify fail; SIGTERM stops it (exit 0, the
# socket gone); SIGHUP reloads. Usage: cli_test.sh RIG
set -eu
rig=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/rig-keep-cli.XXXXXX")
keeper=
trap 'if [ -n "$keeper" ]; then kill -KILL "$keeper" 2>/dev/null || true; fi; rm -rf "$dir"' EXIT
python3 - "$dir/w.safetensors" <<'PY'
import json, struct, sys
tensors = {"a.weight": 4096, "b.bias": 10, "c.scale": 70000}
header, data, at = {}, b"", 0
for name, n in sorted(tensors.items()):
    header[name] = {"dtype": "U8", "shape": [n], "data_offsets": [at, at + n]}
    data += bytes((i * 7 + n) % 251 for i in range(n))
    at += n
h = json.dumps(header).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
fail() { echo "FAIL: $*"; cat "$dir/log" 2>/dev/null; exit 1; }

"$rig" keep "$dir/w.safetensors" --device memory:k --socket "$dir/s" 2> "$dir/log" &
keeper=$!
i=0
while [ ! -S "$dir/s" ]; do
  i=$((i + 1)); [ $i -lt 500 ] || fail "no socket after 5 s"; sleep 0.01
done
[ "$(stat -c %a "$dir/s")" = 600 ] || fail "socket mode $(stat -c %a "$dir/s"), not 600"

"$rig" attach "$dir/s" --list > "$dir/list" || fail "attach --list"
grep -q '^a.weight U8 \[4096\] 4096 bytes$' "$dir/list" || fail "list: $(cat "$dir/list")"
[ "$(wc -l < "$dir/list")" = 3 ] || fail "list has $(wc -l < "$dir/list") lines"
"$rig" attach "$dir/s" --verify "$dir/w.safetensors" > "$dir/verify" || fail "attach --verify"
# "cpu" names the memory device called cpu, as Python's device="cpu" does
"$rig" attach "$dir/s" --verify "$dir/w.safetensors" --device cpu > /dev/null || fail "attach --verify --device cpu"
grep -q '^verified 3 tensors, 74106 bytes$' "$dir/verify" || fail "verify: $(cat "$dir/verify")"

# A copy with one byte changed: --verify must see it.
cp "$dir/w.safetensors" "$dir/x.safetensors"
printf 'Z' | dd of="$dir/x.safetensors" bs=1 seek=$(($(stat -c %s "$dir/x.safetensors") - 5)) conv=notrunc 2>/dev/null
if "$rig" attach "$dir/s" --verify "$dir/x.safetensors" > /dev/null 2> "$dir/err"; then fail "verify passed a changed file"; fi
grep -q "differs" "$dir/err" || fail "no difference named: $(cat "$dir/err")"

# usage errors
if "$rig" attach "$dir/s" > /dev/null 2>&1; then fail "attach with neither --list nor --verify"; fi
set +e; "$rig" keep "$dir/w.safetensors" > /dev/null 2>&1; rc=$?; set -e
[ $rc = 2 ] || fail "keep without --device/--socket exited $rc, not 2"
set +e; "$rig" attach "$dir/none" --list > /dev/null 2>&1; rc=$?; set -e
[ $rc = 1 ] || fail "attach to no keeper exited $rc, not 1"

# SIGHUP reloads: the log says so, and the keeper serves on
kill -HUP "$keeper"
i=0
while ! grep -q "generation 2 loaded" "$dir/log"; do
  i=$((i + 1)); [ $i -lt 500 ] || fail "no reload after SIGHUP"; sleep 0.01
done
"$rig" attach "$dir/s" --verify "$dir/w.safetensors" > /dev/null || fail "attach --verify after the reload"

kill -TERM "$keeper"
set +e; wait "$keeper"; rc=$?; set -e
keeper=
[ $rc = 0 ] || fail "keeper exited $rc after SIGTERM"
[ ! -e "$dir/s" ] || fail "the socket outlived the keeper"
grep -q "listening on" "$dir/log" || fail "no 'listening' in the log"
grep -q "loaded: 3 tensors" "$dir/log" || fail "no 'loaded' in the log"
echo "ok"
