#!/bin/sh
# CI: rig's Debian packages. Checks the Build-Depends (dpkg-checkbuilddeps), builds librig0, librig-dev,
# rig-tools, python3-rig and librig-doc with `dpkg-buildpackage -us -uc -b` from a copy of the sources
# (failing on any symbol new to or missing from debian/librig0.symbols), runs lintian on them, installs them
# with dpkg -i (CI has no chroot), runs a smoke test (rig --version, a C program built with pkg-config,
# python3 -c "import rig"), checks that librig0 has the Vulkan driver (the build's summary, the library's
# strings, vulkan:0 on lavapipe through the installed `rig devices`) and runs the autopkgtests of debian/tests against the installed packages, and
# removes them again with dpkg -r, leaving the machine as it was.
#   scripts/debian-check.sh OUT
# The package build is bounded by RIG_DEB_BUILD_TIMEOUT seconds (420: about a minute and a half on an
# idle 2-core CI machine; a shared, loaded one needs more).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: scripts/debian-check.sh OUT}" && cd "$1" && pwd)
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
packages="librig0 librig-dev rig-tools python3-rig librig-doc"
for p in $packages; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    echo "$p is already installed on this machine: not replacing it (remove it first)"
    exit 1
  fi
done

echo "--- dpkg-checkbuilddeps"
(cd "$src" && dpkg-checkbuilddeps)
echo "--- dpkg-buildpackage -us -uc -b"
rm -rf "$out/src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mkdir -p "$out/src"
# The sources as git sees them (committed, and new files not ignored), without build directories; from a
# tree that is not a git checkout (an unpacked meson dist tarball), everything but build directories.
if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
  (cd "$src" && git ls-files -co --exclude-standard -z | tar --null --no-recursion --ignore-failed-read -T - -cf -)
else
  (cd "$src" && tar --exclude='./build*' --exclude='./.mesonpy-*' -cf - .)
fi | tar -xf - -C "$out/src"
# The build sees Debian's tools only, as sbuild's clean PATH does: meson finds the python3 it installs for.
(cd "$out/src" && PATH=/usr/sbin:/usr/bin:/sbin:/bin DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" timeout "${RIG_DEB_BUILD_TIMEOUT:-420}" dpkg-buildpackage -us -uc -b) \
  > "$out/build.log" 2>&1 || { tail -60 "$out/build.log"; echo "dpkg-buildpackage failed (log: $out/build.log)"; exit 1; }
grep -A12 'dpkg-gensymbols' "$out/build.log" | grep '^[+-] ' && echo "(symbols differ from debian/librig0.symbols: see debian/README.source)"
ls "$out"/*.deb

echo "--- lintian"
timeout 120 lintian --fail-on error,warning --display-info "$out"/rig_*.changes

echo "--- dpkg -i, smoke test, dpkg -r"
removed=0
remove() {
  [ $removed = 1 ] && return
  removed=1
  # shellcheck disable=SC2086 # a list of package names
  $SUDO dpkg -r $packages > "$out/remove.log" 2>&1 || { cat "$out/remove.log"; echo "dpkg -r failed"; }
}
trap remove EXIT
$SUDO dpkg -i "$out"/librig0_*.deb "$out"/librig-dev_*.deb "$out"/rig-tools_*.deb "$out"/python3-rig_*.deb \
  "$out"/librig-doc_*.deb \
  > "$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
unset LD_LIBRARY_PATH PYTHONPATH
smoke=$(mktemp -d)
cd "$smoke"
rig --version
# shellcheck disable=SC2046 # pkg-config's flags are meant to split
cc -o hello "$src/tests/install/hello.c" $(pkg-config --cflags --libs rig)
./hello
/usr/bin/python3 -c "import rig; print('python3-rig', rig.__version__, rig.__file__)"
/usr/bin/python3 -c "import rig; a = rig.memory_device('A'); b = rig.Buffer.create(a, 4); b.write_from(0, b'rig!'); assert bytes(b) == b'rig!'"
# The Build-Depends alone brought the Vulkan driver (the package build sees Debian's tools and whatever
# Build-Depends installed; a clean chroot would have only those, dpkg-checkbuilddeps and deps-check.sh's
# drift check above say this machine has no fewer): meson's summary in the build said so, the packaged
# library names the loader it opens and the entry point it looks up, and `rig devices` from the installed
# packages opens vulkan:0 on lavapipe (mesa-vulkan-drivers, scripts/deps.sh test).
echo "--- librig0 has the Vulkan driver"
grep -Eq 'vulkan \(dlopen libvulkan\.so\.1\) *: YES' "$out/build.log" ||
  { grep -A6 'Drivers' "$out/build.log"; echo "the package build left the Vulkan driver out (meson summary above)"; exit 1; }
lib=$(dpkg -L librig0 | grep '/librig\.so\.0\.[0-9.]*$' | head -n 1)
for s in libvulkan.so.1 vkGetInstanceProcAddr; do
  grep -aq "$s" "$lib" || { echo "$lib does not name $s: built without the Vulkan driver"; exit 1; }
done
[ -n "$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null)" ] ||
  { echo "lavapipe is not installed (mesa-vulkan-drivers: scripts/deps.sh test)"; exit 1; }
rig devices --json | python3 -c '
import json, sys
devices = {d["name"]: d for d in json.load(sys.stdin)["devices"]}
vk = devices.get("vulkan:0")
assert vk and vk["opened"] and vk["framework"] == "Vulkan", "rig devices lists no open vulkan:0: %r" % devices
print("rig devices (installed librig0): vulkan:0", vk["model"])
'
# The autopkgtests (debian/tests/control), each as autopkgtest runs it: from the sources' top, with its
# own AUTOPKGTEST_TMP and Debian's PATH (a testbed's), against the installed packages (CI has no testbed to give
# autopkgtest itself).
for t in $(sed -n 's/^Tests: *//p' "$src/debian/tests/control"); do
  echo "--- autopkgtest $t"
  mkdir -p "$smoke/$t"
  (cd "$src" && PATH=/usr/sbin:/usr/bin:/sbin:/bin AUTOPKGTEST_TMP="$smoke/$t" timeout 120 "debian/tests/$t") || { echo "autopkgtest $t failed"; exit 1; }
done
cd /
rm -rf "$smoke"
remove
for p in $packages; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    echo "$p is still installed after dpkg -r"; exit 1
  fi
done
echo "debian: built, lintian clean, installed, smoke-tested and removed"
