#!/bin/sh
# On demand (not in test-all.sh: it needs Debian's mirror and about five minutes): the Debian build in a
# clean chroot, the proof that debian/control's Build-Depends alone bring every driver. mmdebstrap makes a
# bookworm buildd chroot (essential packages and build-essential only) in OUT/chroot, apt-get satisfy
# installs the Build-Depends and nothing else, dpkg-buildpackage -b builds the sources (as git sees them)
# there, and the check fails unless meson's summary said the Vulkan driver was built and the packaged
# librig names the loader it opens (libvulkan.so.1) and the entry point it looks up (vkGetInstanceProcAddr).
# Root (chroot, a mount of /proc); Debian: mmdebstrap.
#   scripts/debian-chroot-check.sh OUT
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: scripts/debian-chroot-check.sh OUT}" && cd "$1" && pwd)
root=$out/chroot
command -v mmdebstrap >/dev/null || { echo "mmdebstrap not found (Debian: mmdebstrap)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "scripts/debian-chroot-check.sh: needs root (chroot, mount)"; exit 1; }
deps=$(sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*: /p' "$src/debian/control" | sed '$d' |
  sed 's/^Build-Depends://' | tr -d '\n' | tr -s ' ')
echo "--- mmdebstrap --variant=buildd bookworm $root"
rm -rf "$root"
mmdebstrap --variant=buildd bookworm "$root" > "$out/mmdebstrap.log" 2>&1 || { tail -20 "$out/mmdebstrap.log"; exit 1; }
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
trap 'umount "$root/proc"' EXIT
mkdir -p "$root/build/rig"
(cd "$src" && git ls-files -co --exclude-standard -z | tar --null --no-recursion -T - -cf -) | tar -xf - -C "$root/build/rig"
echo "--- apt-get satisfy (the Build-Depends only):$deps"
chroot "$root" apt-get update -q > "$out/satisfy.log" 2>&1 &&
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get satisfy -y -q --no-install-recommends "$deps" \
    >> "$out/satisfy.log" 2>&1 || { tail -20 "$out/satisfy.log"; exit 1; }
echo "Vulkan packages the Build-Depends brought: $(chroot "$root" dpkg-query -W -f='${Package}\n' | grep -i vulkan | tr '\n' ' ')"
echo "--- dpkg-buildpackage -us -uc -b in the chroot"
chroot "$root" sh -c 'cd /build/rig && PATH=/usr/sbin:/usr/bin:/sbin:/bin DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b' \
  > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo "dpkg-buildpackage failed (log: $out/build.log)"; exit 1; }
grep -A5 '^  Drivers' "$out/build.log"
grep -Eq 'vulkan \(dlopen libvulkan\.so\.1\) *: YES' "$out/build.log" || { echo "the chroot's build left the Vulkan driver out"; exit 1; }
rm -rf "$out/librig0"
dpkg-deb -x "$root"/build/librig0_*.deb "$out/librig0"
lib=$(ls "$out"/librig0/usr/lib/*/librig.so.0.*)
for s in libvulkan.so.1 vkGetInstanceProcAddr; do
  grep -aq "$s" "$lib" || { echo "$lib does not name $s: built without the Vulkan driver"; exit 1; }
done
echo "debian chroot: built from the Build-Depends alone; librig0 has the Vulkan driver"
