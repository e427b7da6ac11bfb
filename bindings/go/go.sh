#!/bin/sh
# Builds (mode build) or tests (mode test) the Go package: SWIG generates rig.go and rig_wrap.c from
# bindings/swig/rig.i into the package directory, next to the package's own Go files, and cgo links it
# against the librig of this build. Offline: the module has no dependencies, GOPROXY=off.
#   go.sh build|test SOURCE_DIR SWIG INCLUDE_DIR LIB_DIR PACKAGE_DIR GO
set -eu
mode=$1 src=$2 swig=$3 inc=$4 lib=$5 pkg=$6 go=$7
export GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=on CGO_ENABLED=1
export GOCACHE="$pkg/../go-cache" GOPATH="$pkg/../go-path" HOME="${HOME:-$pkg/..}"
export CGO_CFLAGS="-I$inc -O2" CGO_LDFLAGS="-L$lib -lrig -Wl,-rpath,$lib"
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ "$mode" = build ]; then
  mkdir -p "$pkg"
  cp "$src/go.mod" "$src/api.go" "$src/callbacks.go" "$src/rig_test.go" "$pkg/"
  "$swig" -go -cgo -intgosize 64 -DSWIGWORDSIZE64 -package rig -I"$inc" -I"$src/../swig" -outdir "$pkg" -o "$pkg/rig_wrap.c" \
    "$src/../swig/rig.i"
  cd "$pkg"
  "$go" vet -unsafeptr=false .
  "$go" build .
  touch "$pkg/.built"
else
  cd "$pkg"
  "$go" test -count=1 -v .
fi
