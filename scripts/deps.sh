#!/bin/sh
# Installs the Debian 12 (bookworm) packages a build of rig needs, by what is built. No GPU SDK: drivers
# load at run time. These lists are the one list of build dependencies: scripts/deps-check.sh (run by
# scripts/test-all.sh) fails when meson.build, debian/control or bindings/python/README.md drift from them.
#   scripts/deps.sh lib    the library, the rig command and rig(1): a compiler, meson, ninja, pkg-config and
#                          what meson.build requires (nlohmann-json, xxhash, liburing, DLPack and Vulkan
#                          headers; scdoc for the man page)
#   scripts/deps.sh test   lib + the test suites (cmocka, Vulkan on lavapipe, valgrind, the ABI check)
#   scripts/deps.sh all    test + the bindings, the benchmarks' peers and the packaging checks: what
#                          scripts/test-all.sh runs
#   scripts/deps.sh --list lib|test|all|bindings|bench|packaging   prints a list, one package a line
# With no argument: all, what the README's two commands need.
set -eu
what=${1:-all}
list=""
if [ "$what" = --list ]; then list=1 what=${2:-all}; fi
lib="gcc g++ meson ninja-build pkg-config scdoc nlohmann-json3-dev libxxhash-dev libdlpack-dev liburing-dev
  libvulkan-dev"
test="libcmocka-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslc
  abigail-tools valgrind rsync file binutils python3 clang libamdhip64-dev"
bindings="swig python3-dev python3-numpy golang-go ocaml-nox ocaml-findlib ocaml-dune libctypes-ocaml-dev
  rustc cargo rust-clippy bindgen libclang-dev librust-log-dev librust-libc-dev"
bench="libstarpu-dev"
# the Python wheel in a venv and the Debian packages (scripts/python-wheel-check.sh, debian-check.sh)
packaging="python3-pytest python3-mesonpy python3-venv dpkg-dev debhelper dh-python lintian"
case "$what" in
  lib) packages="$lib" ;;
  test) packages="$lib $test" ;;
  all) packages="$lib $test $bindings $bench $packaging" ;;
  bindings | bench | packaging) [ -n "$list" ] || { echo "scripts/deps.sh: $what only with --list" >&2; exit 2; }
    eval "packages=\$$what" ;;
  -h | --help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "usage: scripts/deps.sh [lib|test|all] or scripts/deps.sh --list GROUP" >&2; exit 2 ;;
esac
if [ -n "$list" ]; then
  printf '%s\n' $packages
  exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
