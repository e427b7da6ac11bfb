#!/bin/sh
# Installs what building and testing rig needs on Debian 12 (bookworm). No GPU SDK: drivers load at run time.
set -eu
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
packages="meson ninja-build pkg-config g++ gcc libcmocka-dev
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslc
  swig python3-dev python3-numpy golang-go ocaml-nox ocaml-findlib libctypes-ocaml-dev ocaml-dune rust-clippy
  rustc cargo bindgen libclang-dev abigail-tools libstarpu-dev valgrind rsync file binutils"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
