#!/bin/sh
# `meson install --destdir` into a temporary directory, then a C program built only with
# `pkg-config --cflags --libs rig` against that install (PKG_CONFIG_SYSROOT_DIR pointing into it) runs.
#   install_test.sh MESON BUILD_DIR PREFIX LIBDIR INCLUDEDIR CC HELLO_C
set -eu
meson=$1 build=$2 prefix=$3 libdir=$4 includedir=$5 cc=$6 hello=$7
case "$libdir" in /*) ;; *) libdir="$prefix/$libdir" ;; esac
case "$includedir" in /*) ;; *) includedir="$prefix/$includedir" ;; esac
dest=$(mktemp -d "${TMPDIR:-/tmp}/rig-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
"$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet
[ ! -e "$dest$includedir/rig_testing.h" ] || { echo "the tests' header rig_testing.h was installed" >&2; exit 1; }
for f in "$includedir/rig.h" "$includedir/rig_mapped.h" "$libdir/pkgconfig/rig.pc" "$libdir/librig.so" "$libdir/librig.so.0"; do
  [ -e "$dest$f" ] || { echo "not installed: $f" >&2; exit 1; }
done
# the development link and the soname link both end at the versioned file
real=$(readlink -f "$dest$libdir/librig.so")
[ "$real" = "$(readlink -f "$dest$libdir/librig.so.0")" ] || { echo "librig.so and librig.so.0 differ" >&2; exit 1; }
export PKG_CONFIG_PATH="$dest$libdir/pkgconfig" PKG_CONFIG_LIBDIR="$dest$libdir/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$dest"
flags=$(pkg-config --cflags --libs rig)
echo "pkg-config --cflags --libs rig: $flags"
case "$flags" in *"$dest"*) ;; *) echo "pkg-config flags do not point into the DESTDIR" >&2; exit 1 ;; esac
# shellcheck disable=SC2086
$cc -std=c99 -Wall -Wextra -Werror -o "$dest/hello" "$hello" $flags
out=$(LD_LIBRARY_PATH="$dest$libdir" "$dest/hello")
echo "$out"
case "$out" in "hello, world"*) ;; *) echo "the installed library did not print hello, world" >&2; exit 1 ;; esac
# and it was the installed library that ran
LD_LIBRARY_PATH="$dest$libdir" LD_DEBUG=libs "$dest/hello" 2>&1 >/dev/null | grep -q "$dest$libdir/librig.so.0" ||
  { echo "hello did not load librig from the DESTDIR" >&2; exit 1; }
echo "installed into $dest, built with pkg-config only, ran"
