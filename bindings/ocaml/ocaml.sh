#!/bin/sh
# The OCaml binding with dune, for the meson build (dune's build directory is under meson's; nothing is
# written in the source tree). ctypes loads librig at run time from the libdir recorded at build time
# (RIG_LIBDIR, libdir.sh), so neither the test nor an installed program needs LD_LIBRARY_PATH.
#   ocaml.sh build|test SOURCE_DIR WORK_DIR LIB_DIR DUNE
#   ocaml.sh install    SOURCE_DIR WORK_DIR LIBDIR OCAML_LIBDIR DUNE PREFIX DOCDIR
#       the findlib package `rig` (META, rig.mli, .cmi, .cmxa ...) into DESTDIR/OCAML_LIBDIR/rig, built
#       for librig in LIBDIR: OCAMLPATH=OCAML_LIBDIR then finds it (ocamlfind, dune); its README in DOCDIR/rig.
set -eu
mode=$1 src=$2 work=$3 lib=$4
export DUNE_CACHE=disabled
case "$mode" in
build)
  RIG_LIBDIR="$lib" "$5" build --root "$src" --build-dir "$work/dune" @install test/test_rig.exe test/test_load.exe ;;
test)
  RIG_LIBDIR="$lib" "$5" test --root "$src" --build-dir "$work/dune" --force ;;
install)
  # docdir: dune's default is PREFIX/doc, outside the FHS; meson's datadir/doc is where the rest goes.
  ocaml_libdir=$5 dune=$6 prefix=$7 docdir=$8
  RIG_LIBDIR="$lib" "$dune" build --root "$src" --build-dir "$work/dune-install" @install
  "$dune" install --root "$src" --build-dir "$work/dune-install" --prefix "$prefix" --libdir "$ocaml_libdir" \
    --docdir "$docdir" ${DESTDIR:+--destdir "$DESTDIR"} rig ;;
esac
