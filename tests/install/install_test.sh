#!/bin/sh
# An install works from wherever it lands. `meson install --destdir` puts the files under a temporary
# directory, away from the prefix they were configured for: what runs from there finds librig by its
# RUNPATH ($ORIGIN-relative), not by the configured prefix. With LD_LIBRARY_PATH unset:
#   - bin/rig --version runs, and loads the librig beside it;
#   - the README's C program and tests/install/hello.c build with `pkg-config --cflags --libs rig` only
#     (PKG_CONFIG_SYSROOT_DIR into the DESTDIR) plus the rpath the README's install section gives, and run;
#   - where the Python binding was built, `python3 -c "import rig"` imports the installed module;
#   - where scdoc was found, the man page is installed.
#   install_test.sh MESON BUILD_DIR PREFIX LIBDIR INCLUDEDIR BINDIR MANDIR CC HELLO_C README MAN(yes|no) PYTHON
set -eu
meson=$1 build=$2 prefix=$3 libdir=$4 includedir=$5 bindir=$6 mandir=$7 cc=$8 hello=$9
shift 9
readme=$1 man=$2 python=${3:-}
abs() { case "$1" in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
libdir=$(abs "$libdir") includedir=$(abs "$includedir") bindir=$(abs "$bindir") mandir=$(abs "$mandir")
unset LD_LIBRARY_PATH
dest=$(mktemp -d "${TMPDIR:-/tmp}/rig-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
"$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet
[ ! -e "$dest$includedir/rig_testing.h" ] || { echo "the tests' header rig_testing.h was installed" >&2; exit 1; }
for f in "$includedir/rig.h" "$includedir/rig_mapped.h" "$libdir/pkgconfig/rig.pc" "$libdir/librig.so" "$libdir/librig.so.0" "$bindir/rig"; do
  [ -e "$dest$f" ] || { echo "not installed: $f" >&2; exit 1; }
done
if [ "$man" = yes ]; then
  [ -s "$dest$mandir/man1/rig.1" ] || { echo "not installed: $mandir/man1/rig.1" >&2; exit 1; }
fi
# the development link and the soname link both end at the versioned file
real=$(readlink -f "$dest$libdir/librig.so")
[ "$real" = "$(readlink -f "$dest$libdir/librig.so.0")" ] || { echo "librig.so and librig.so.0 differ" >&2; exit 1; }

# Runs "$@" with LD_DEBUG=libs and fails unless librig was loaded from the DESTDIR.
loads_installed() {
  loaded=$(LD_DEBUG=libs "$@" 2>&1 >/dev/null | sed -n 's/.*calling init: \(.*librig\.so\.0\)$/\1/p' | head -n 1)
  [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$real" ] ||
    { echo "$*: librig was loaded from '${loaded}', not from $dest$libdir" >&2; exit 1; }
}

# bin/rig
version=$("$dest$bindir/rig" --version)
echo "installed rig --version: $version"
case "$version" in "rig "*"(librig "*")") ;; *) echo "unexpected --version output" >&2; exit 1 ;; esac
loads_installed "$dest$bindir/rig" --version

# C programs through pkg-config
export PKG_CONFIG_PATH="$dest$libdir/pkgconfig" PKG_CONFIG_LIBDIR="$dest$libdir/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$dest"
flags=$(pkg-config --cflags --libs rig)
rpath="-Wl,-rpath,$(pkg-config --variable=libdir rig)" # pkgconf puts the sysroot before it
echo "pkg-config --cflags --libs rig: $flags"
case "$flags" in *"$dest"*) ;; *) echo "pkg-config flags do not point into the DESTDIR" >&2; exit 1 ;; esac
# the README's program, as the README prints it, warning-free under -Wall -Wextra (a reader compiles it so)
# (the README's C blocks in order: the program, the portable-upload line, the loader's function)
c_block() { awk -v want="$1" '/^```c$/ { n++; if (n == want) { on = 1; next } } on && /^```$/ { exit } on' "$readme"; }
c_block 1 > "$dest/readme.c"
[ -s "$dest/readme.c" ] || { echo "no C program found in $readme" >&2; exit 1; }
# the loader's example compiles against the installed rig_load.h as printed
c_block 3 > "$dest/readme_load.c"
grep -q 'rig_load.h' "$dest/readme_load.c" || { echo "no rig_load.h example found in $readme" >&2; exit 1; }
# shellcheck disable=SC2086
$cc -std=c99 -Wall -Wextra -Werror -c -o "$dest/readme_load.o" "$dest/readme_load.c" $flags
# shellcheck disable=SC2086
$cc -std=c99 -Wall -Wextra -Werror -o "$dest/readme" "$dest/readme.c" $flags "$rpath"
# shellcheck disable=SC2086
$cc -std=c99 -Wall -Wextra -Werror -o "$dest/hello" "$hello" $flags "$rpath"
for program in readme hello; do
  out=$("$dest/$program")
  echo "$program: $out"
  case "$out" in "hello, world"*) ;; *) echo "$program did not print hello, world" >&2; exit 1 ;; esac
  loads_installed "$dest/$program"
done

# the Python module, where it was built
module=$(find "$dest" -name '_rig*.so' | head -n 1)
if [ -n "$module" ] && [ -n "$python" ]; then
  site=$(dirname "$(dirname "$module")")  # the raw module lies in the package directory rig/
  PYTHONPATH=$site "$python" -c 'import rig, sys; print("python: import rig from", rig.__file__)'
  PYTHONPATH=$site loads_installed "$python" -c 'import rig'
else
  echo "python: the binding was not built here: import not checked"
fi
echo "installed into $dest, away from $prefix: everything ran without LD_LIBRARY_PATH"
