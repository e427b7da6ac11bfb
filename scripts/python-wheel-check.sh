#!/bin/sh
# CI: the Python package as a user gets it. Builds the wheel with `pip wheel . --no-build-isolation`
# (meson-python from Debian, nothing downloaded), installs it into a fresh venv, and with no
# LD_LIBRARY_PATH imports rig from there and runs the pytest suite against it.
#   scripts/python-wheel-check.sh OUT [PLAIN_BUILD]
# OUT holds the wheel and the venv. PLAIN_BUILD (optional) is a plain meson
# build whose fake libcuda lets the timeout cases run (tests/cuda/libfakecuda.so); without it they skip.
# The wheel's build is bounded by RIG_WHEEL_BUILD_TIMEOUT seconds (600). meson-python builds in
# OUT/wheel-build, kept between runs, so a second run recompiles only what changed (the plain build's
# objects cannot serve: meson-python builds with buildtype=release; ccache, base_dir set, shares the rest).
# The wheel must hold what it needs: its module's RUNPATH is $ORIGIN alone, and its librig needs nothing
# but the C and C++ runtimes (libxxhash and liburing are linked statically).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: scripts/python-wheel-check.sh OUT [PLAIN_BUILD]}" && cd "$1" && pwd)
plain=${2:-}
py=/usr/bin/python3  # Debian's interpreter, which has meson-python, numpy and pytest
unset LD_LIBRARY_PATH PYTHONPATH
rm -rf "$out/wheelhouse" "$out/venv" "$out/unpacked"
echo "--- pip wheel . --no-build-isolation --config-settings builddir=$out/wheel-build"
(cd "$src" && timeout "${RIG_WHEEL_BUILD_TIMEOUT:-600}" "$py" -m pip wheel . --no-build-isolation --no-deps --no-index -q \
  --config-settings builddir="$out/wheel-build" -w "$out/wheelhouse") > "$out/wheel.log" 2>&1 \
  || { tail -40 "$out/wheel.log"; echo "pip wheel failed (log: $out/wheel.log)"; exit 1; }
wheel=$(ls "$out"/wheelhouse/rig_runtime-*.whl)
echo "$wheel:"
"$py" -m zipfile -l "$wheel" | awk 'NR > 1 {print "  " $1}'
"$py" -m zipfile -l "$wheel" | grep -q 'librig\.so\.0' || { echo "the wheel holds no librig"; exit 1; }
"$py" -m zipfile -e "$wheel" "$out/unpacked"
module=$(ls "$out"/unpacked/rig/_rig*.so)
runpath=$(readelf -d "$module" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[ "$runpath" = '$ORIGIN' ] || { echo "the module's RUNPATH is '$runpath', not \$ORIGIN alone"; exit 1; }
needed=$(readelf -d "$out/unpacked/rig/librig.so.0" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
for lib in $needed; do
  case "$lib" in
    libc.so.6 | libm.so.6 | libstdc++.so.6 | libgcc_s.so.1 | ld-linux-x86-64.so.2) ;;
    *) echo "the wheel's librig needs $lib, which the wheel does not hold"; exit 1 ;;
  esac
done
echo "module RUNPATH \$ORIGIN; librig needs: $needed"

echo "--- a fresh venv (--system-site-packages: Debian's numpy and pytest)"
"$py" -m venv --system-site-packages "$out/venv"
"$out/venv/bin/python" -m pip install -q --no-index --no-deps "$wheel"
cd "$out"  # away from the sources: only the installed package can be imported
"$out/venv/bin/python" -c "import rig; print(rig.__version__)"
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
