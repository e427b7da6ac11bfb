#!/bin/sh
# CI: the Python package as a user gets it, from one wheel made once. Builds the wheel with
# `pip wheel . --no-build-isolation` (meson-python from Debian, nothing downloaded) unless this tree's
# sources already made the one in OUT/wheelhouse (or RIG_WHEEL names a prebuilt .whl), checks what it needs
# (auditwheel's questions, answered with readelf), installs that same file into a fresh venv (timed: the
# install is seconds, the build minutes), and with no LD_LIBRARY_PATH imports rig from there and runs the
# pytest suite against it.
#   scripts/python-wheel-check.sh OUT [PLAIN_BUILD]
#   RIG_WHEEL=PATH.whl scripts/python-wheel-check.sh OUT [PLAIN_BUILD]    a wheel built before, as is
# OUT holds the wheel (OUT/wheelhouse, with OUT/wheelhouse/SOURCES: the hash of the sources it was built
# from), the venv and the unpacked wheel. PLAIN_BUILD (optional) is a plain meson build whose fake libcuda
# lets the timeout cases run (tests/cuda/libfakecuda.so); without it they skip.
# The wheel's build is bounded by RIG_WHEEL_BUILD_TIMEOUT seconds (600). meson-python builds in
# OUT/wheel-build, kept between runs, so a changed tree recompiles only what changed. The plain build's
# objects cannot serve: meson-python configures a build of its own (buildtype=release, -Dpython_wheel=true:
# libxxhash linked statically, the module's RUNPATH $ORIGIN); ccache, base_dir set, shares the rest.
# The wheel must hold what it needs: every ELF file in it needs only manylinux's base libraries (glibc and
# the C and C++ runtimes) and what the wheel itself holds; its module's RUNPATH is $ORIGIN alone.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: scripts/python-wheel-check.sh OUT [PLAIN_BUILD]}" && cd "$1" && pwd)
plain=${2:+$(cd "$2" && pwd)}
py=/usr/bin/python3  # Debian's interpreter, which has meson-python, numpy and pytest
unset LD_LIBRARY_PATH PYTHONPATH
rm -rf "$out/venv" "$out/unpacked"

# What the wheel is built from: the files git knows (committed or new, not ignored) that meson-python's
# build reads, by content, and the interpreter it builds for.
sources_hash() {
  (cd "$src" && git ls-files -co --exclude-standard -- meson.build meson_options.txt pyproject.toml include src \
      bindings/meson.build bindings/python bindings/swig pkgconfig |
    while read -r f; do [ -f "$f" ] && printf '%s %s\n' "$(sha256sum < "$f" | cut -c1-64)" "$f"; done
   "$py" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-64
}

if [ -n "${RIG_WHEEL:-}" ]; then
  wheel=$(cd "$(dirname "$RIG_WHEEL")" && pwd)/$(basename "$RIG_WHEEL")
  [ -f "$wheel" ] || { echo "RIG_WHEEL=$RIG_WHEEL: no such file"; exit 1; }
  echo "--- the prebuilt wheel $wheel"
else
  hash=$(sources_hash)
  wheel=$(ls "$out"/wheelhouse/rig_runtime-*.whl 2>/dev/null | head -n 1) || true
  if [ -n "$wheel" ] && [ "$(cat "$out/wheelhouse/SOURCES" 2>/dev/null)" = "$hash" ]; then
    echo "--- the wheel these sources made already: $wheel"
  else
    rm -rf "$out/wheelhouse"
    echo "--- pip wheel . --no-build-isolation --config-settings builddir=$out/wheel-build"
    start=$(date +%s)
    (cd "$src" && timeout "${RIG_WHEEL_BUILD_TIMEOUT:-600}" "$py" -m pip wheel . --no-build-isolation --no-deps --no-index -q \
      --config-settings builddir="$out/wheel-build" -w "$out/wheelhouse") > "$out/wheel.log" 2>&1 \
      || { tail -40 "$out/wheel.log"; echo "pip wheel failed (log: $out/wheel.log)"; exit 1; }
    wheel=$(ls "$out"/wheelhouse/rig_runtime-*.whl)
    echo "$hash" > "$out/wheelhouse/SOURCES"
    echo "built in $(($(date +%s) - start)) s"
  fi
fi

echo "--- what $(basename "$wheel") holds and needs"
"$py" -m zipfile -l "$wheel" | awk 'NR > 1 {print "  " $1}'
"$py" -m zipfile -e "$wheel" "$out/unpacked"
"$py" - "$out/unpacked" <<'PY'
# auditwheel's questions without auditwheel (not in Debian 12): every ELF file's NEEDED is a manylinux base
# library or a file of the wheel; the module's RUNPATH is $ORIGIN alone and librig has none; the newest
# glibc and libstdc++ symbol versions it asks for, and what the wheel's tag and metadata say of the platform.
import glob, os, re, subprocess, sys
root = sys.argv[1]
base = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libstdc++.so.6",
        "libgcc_s.so.1", "ld-linux-x86-64.so.2"}
elves = [p for p in glob.glob(os.path.join(root, "**", "*.so*"), recursive=True)
         if open(p, "rb").read(4) == b"\x7fELF"]
held = {os.path.basename(p) for p in elves}
assert any(n.startswith("librig.so.0") for n in held), "the wheel holds no librig"
failed, versions = [], {}
for p in sorted(elves):
    name = os.path.relpath(p, root)
    dyn = subprocess.run(["readelf", "-d", p], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dyn)
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\).*\[(.*)\]", dyn)
    for lib in needed:
        if lib not in base and lib not in held:
            failed.append("%s needs %s: neither a manylinux base library nor in the wheel" % (name, lib))
    if name.startswith("rig/_rig") and runpath != ["$ORIGIN"]:
        failed.append("%s: RUNPATH %s, not $ORIGIN alone" % (name, runpath))
    if name.startswith("rig/librig") and runpath:
        failed.append("%s: RUNPATH %s where none is needed" % (name, runpath))
    syms = subprocess.run(["readelf", "-V", p], capture_output=True, text=True, check=True).stdout
    for lib, pat in (("glibc", r"GLIBC_([0-9.]+)"), ("libstdc++", r"GLIBCXX_([0-9.]+)")):
        for v in re.findall(pat, syms):
            key = tuple(int(x) for x in v.split("."))
            versions[lib] = max(versions.get(lib, key), key)
    print("  %-40s NEEDED %s; RUNPATH %s" % (name, " ".join(needed), " ".join(runpath) or "none"))
opens = sorted({s for p in elves for s in re.findall(rb"lib(?:cuda|amdhip64|vulkan)\.so(?:\.[0-9]+)?",
                                                  open(p, "rb").read())})
meta = glob.glob(os.path.join(root, "*.dist-info"))[0]
tag = [l.split(": ", 1)[1] for l in open(os.path.join(meta, "WHEEL")).read().splitlines() if l.startswith("Tag: ")]
requires = [l for l in open(os.path.join(meta, "METADATA")).read().splitlines() if l.startswith("Requires-")]
print("  needs glibc >= %s, libstdc++ >= GLIBCXX_%s; tag %s; %s" % (
    ".".join(map(str, versions.get("glibc", ()))), ".".join(map(str, versions.get("libstdc++", ()))),
    " ".join(tag), "; ".join(requires)))
print("  opens at run time where present (drivers): %s" % " ".join(o.decode() for o in opens))
m = re.match(r".*-manylinux_(\d+)_(\d+)_", tag[0] if tag else "")
if m and versions.get("glibc", (0,)) > (int(m.group(1)), int(m.group(2))):
    failed.append("tag %s promises glibc %s.%s, the wheel asks for %s" % (tag[0], m.group(1), m.group(2), versions["glibc"]))
for f in failed:
    print("FAIL: " + f)
sys.exit(1 if failed else 0)
PY

echo "--- a fresh venv (--system-site-packages: Debian's numpy and pytest), pip install of that wheel"
"$py" -m venv --system-site-packages "$out/venv"
start=$(date +%s.%N)
"$out/venv/bin/python" -m pip install -q --no-index --no-deps "$wheel"
echo "pip install $(basename "$wheel"): $("$py" -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$start") s"
cd "$out"  # away from the sources: only the installed package can be imported
"$out/venv/bin/python" - "$out/venv" <<'PY'
import os, sys
import rig
venv = os.path.realpath(sys.argv[1])
where = os.path.realpath(rig.__file__)
assert where.startswith(venv + os.sep), "rig imported from %s, not the venv %s" % (where, venv)
print("rig", rig.__version__, "from", os.path.dirname(where))
PY
echo "--- pytest bindings/python against the installed wheel"
if [ -n "$plain" ] && [ -f "$plain/tests/cuda/libfakecuda.so" ] && [ -f "$src/tests/cuda/kernels.ptx" ]; then
  RIG_CUDA_LIBRARY="$plain/tests/cuda/libfakecuda.so" RIG_TEST_CUDA_PTX="$src/tests/cuda/kernels.ptx"
  export RIG_CUDA_LIBRARY RIG_TEST_CUDA_PTX
fi
timeout 300 "$out/venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$src/bindings/python"
