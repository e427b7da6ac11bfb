#!/bin/sh
# The Go module rig.dev/rig for the meson build, offline (GOPROXY=off; the module has no dependencies).
#   go.sh build   SOURCE_DIR SWIG INCLUDE_DIR LIB_DIR WORK_DIR GO
#       assembles the module in WORK_DIR/module: the source files, and the raw layer generated there by
#       internal/raw/gen.sh (what `go generate` runs); then `go vet` (its defaults) and `go build`. cgo
#       finds librig through `#cgo pkg-config: rig` and WORK_DIR/pkgconfig/rig.pc, a rig.pc of this build
#       tree (no CGO_* flags are set).
#   go.sh test    SOURCE_DIR SWIG INCLUDE_DIR LIB_DIR WORK_DIR GO
#       `go test` of the module (librig of this build on LD_LIBRARY_PATH).
#   go.sh install WORK_DIR VERSION PROXY_DIR LIBDIR
#       writes the module, as a Go module proxy serves it, to PROXY_DIR/rig.dev/rig/@v/ (list, .info, .mod,
#       .zip): GOPROXY=file://PROXY_DIR then resolves `require rig.dev/rig vVERSION` offline. Where LIBDIR
#       is not one the dynamic linker searches anyway, the module records it as the programs' RUNPATH
#       (internal/raw/rpath.go), so they run without LD_LIBRARY_PATH.
set -eu
mode=$1
if [ "$mode" = install ]; then
  work=$2 version=v$3 proxy=${DESTDIR:-}$4 libdir=$5
  stage="$work/install-stage/rig.dev/rig@$version"
  rm -rf "$work/install-stage"
  mkdir -p "$stage"
  (cd "$work/module" && find . -name '*_test.go' -prune -o \( -name '*.go' -o -name go.mod -o -name '*.c' \) -print |
    tar -cf - -T -) | tar -C "$stage" -xf -
  case "$libdir" in
  /lib | /lib64 | /usr/lib | /usr/lib64 | /lib/*-linux-gnu* | /usr/lib/*-linux-gnu*) ;;
  *) cat >"$stage/internal/raw/rpath.go" <<GO
package raw

// The libdir of the prefix this module was installed with, recorded as the RUNPATH of programs that
// use it (written by meson install: that libdir is not one the dynamic linker searches by itself).

// #cgo LDFLAGS: -Wl,-rpath,$libdir
import "C"
GO
  ;;
  esac
  mkdir -p "$proxy/rig.dev/rig/@v"
  cp "$stage/go.mod" "$proxy/rig.dev/rig/@v/$version.mod"
  printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(date -u -d "@${SOURCE_DATE_EPOCH:-0}" +%Y-%m-%dT%H:%M:%SZ)" \
    >"$proxy/rig.dev/rig/@v/$version.info"
  echo "$version" >"$proxy/rig.dev/rig/@v/list"
  # a module zip: every file under rig.dev/rig@VERSION/, nothing else (what `go mod download` checks)
  python3 - "$work/install-stage" "$proxy/rig.dev/rig/@v/$version.zip" <<'PY'
import os, sys, zipfile
root, out = sys.argv[1], sys.argv[2]
names = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for n in names:
        z.write(os.path.join(root, n), n)
PY
  exit 0
fi
src=$2 swig=$3 inc=$4 lib=$5 work=$6 go=$7
export GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=on CGO_ENABLED=1
export GOCACHE="$work/go-cache" GOPATH="$work/go-path" HOME="${HOME:-$work}"
export PKG_CONFIG_PATH="$work/pkgconfig"
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ "$mode" = build ]; then
  rm -rf "$work/module"
  mkdir -p "$work/module/internal/raw" "$work/pkgconfig"
  cp "$src/go.mod" "$src"/*.go "$work/module/"
  cp "$src/internal/raw/raw.go" "$src/internal/raw/gen.sh" "$work/module/internal/raw/"
  printf 'Name: rig\nDescription: rig in its build tree\nVersion: 0\nLibs: -L%s -lrig\nCflags: -I%s\n' "$lib" "$inc" \
    >"$work/pkgconfig/rig.pc"
  cd "$work/module"
  RIG_SWIG_DIR="$src/../swig" RIG_INCLUDE_DIR="$inc" SWIG="$swig" "$go" generate ./internal/raw
  "$go" vet ./...
  "$go" build ./...
else
  cd "$work/module"
  "$go" test -count=1 -v ./...
fi
