#!/bin/sh
# Builds the OCaml binding and its test in the build directory (ocamlopt writes its objects next to the
# sources, so they are copied there first). The result loads librig.so.0 at run time (ctypes.foreign).
#   ocaml.sh SOURCE_DIR OUT_DIR OCAMLFIND
set -eu
src=$1 out=$2 ocamlfind=$3
mkdir -p "$out"
cp "$src/rig.ml" "$src/test_rig.ml" "$out/"
cd "$out"
"$ocamlfind" ocamlopt -w +a-4-9-40-41-42-44-45-70 -warn-error +a -thread \
  -package threads.posix,ctypes,ctypes.foreign,unix,str -linkpkg rig.ml test_rig.ml -o test_rig
