#!/bin/sh
# Writes rig_libdir.ml (a dune rule runs this): the directory librig is loaded from, RIG_LIBDIR where set,
# else what pkg-config says of rig, else "" (the dynamic linker's search by soname).
d=${RIG_LIBDIR:-$(pkg-config --variable=libdir rig 2>/dev/null || true)}
case "$d" in *'"'* | *'\'*) echo "libdir.sh: a libdir with a quote or backslash: $d" >&2; exit 1 ;; esac
printf '(* written by the build (libdir.sh): where librig is *)\nlet libdir = "%s"\n' "$d"
