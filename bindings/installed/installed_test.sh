#!/bin/sh
# The bindings as their users get them, after `meson install` into a temporary prefix and with no
# LD_LIBRARY_PATH anywhere (meson test: bindings-installed):
#   Go     a program requiring rig.dev/rig v0.1.0, built with only PKG_CONFIG_PATH (no CGO_* flags, no
#          replace line) from the installed module proxy (GOPROXY=file://PREFIX/share/go/proxy,
#          GONOSUMDB=rig.dev/rig), offline, by `go mod tidy` and `go build` as the README says;
#   Rust   a program depending on librig 0.1.0 from the crates meson install put under
#          PREFIX/share/cargo/registry (crates.io's librig and librig-sys patched with those directories
#          in the program's .cargo/config.toml, as the README says), offline, linked through pkg-config;
#   OCaml  a program built by ocamlfind against the findlib package rig (OCAMLPATH at the prefix).
# Each prints "hello, world". The prefix holds a library-and-bindings build of this source tree.
#   installed_test.sh SOURCE_ROOT WORK_DIR MESON GO CARGO RUSTC OCAMLFIND   (a tool "" skips its language)
set -eu
src=$1 work=$2 meson=$3 go=$4 cargo=$5 rustc=$6 ocamlfind=$7
unset LD_LIBRARY_PATH CGO_CFLAGS CGO_CPPFLAGS CGO_LDFLAGS RIG_LIBRARY RIG_LIB_DIR RIG_LIBDIR OCAMLPATH
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
passed=0 failed=0
step() { # step NAME OUTPUT_FILE: one check of a program's output
  if head -n1 "$2" | grep -q '^hello, world'; then
    passed=$((passed + 1)); echo "ok   $1: $(head -n1 "$2")"
  else
    failed=$((failed + 1)); echo "FAIL $1:"; cat "$2"
  fi
}
langs="-Dpython=disabled"
[ -n "$cargo" ] && langs="$langs -Drust=enabled" || langs="$langs -Drust=disabled"
[ -n "$go" ] && langs="$langs -Dgo=enabled" || langs="$langs -Dgo=disabled"
[ -n "$ocamlfind" ] && langs="$langs -Docaml=enabled" || langs="$langs -Docaml=disabled"
echo "== meson setup and install into $prefix ($langs)"
"$meson" setup "$work/build" "$src" --prefix="$prefix" -Dtests=false -Dbench=false $langs >"$work/setup.log" ||
  { cat "$work/setup.log"; exit 1; }
"$meson" compile -C "$work/build" >"$work/compile.log" || { tail -n 40 "$work/compile.log"; exit 1; }
"$meson" install -C "$work/build" --quiet
pc=$(dirname "$(find "$prefix" -name rig.pc | head -n1)")
libdir=$(PKG_CONFIG_PATH="$pc" pkg-config --variable=libdir rig)
echo "rig.pc in $pc, librig in $libdir"

if [ -n "$go" ]; then
  echo "== Go: a program requiring rig.dev/rig from the installed module proxy"
  cp -r "$src/bindings/installed/go" "$work/go"
  # What the README tells a user: GONOSUMDB for the one module no checksum database knows (go's default
  # GOSUMDB, sum.golang.org, cannot vouch for a module served from a file), `go mod tidy` to write go.sum,
  # then `go build`; the rest of go's environment as a user has it.
  (cd "$work/go" && env -u GOFLAGS -u GOSUMDB -u GOPRIVATE -u GONOPROXY -u GOINSECURE PKG_CONFIG_PATH="$pc" \
    GOPROXY="file://$prefix/share/go/proxy" GONOSUMDB=rig.dev/rig GOCACHE="$work/go-cache" GOPATH="$work/go-path" \
    HOME="$work" sh -c "'$go' mod tidy && '$go' build -o hello ." >"$work/go.log" 2>&1 &&
    ./hello) >"$work/go.out" 2>&1 || cat "$work/go.log" >>"$work/go.out"
  step "Go program from the installed module, PKG_CONFIG_PATH only" "$work/go.out"
fi

if [ -n "$cargo" ]; then
  echo "== Rust: a program depending on the crates installed under share/cargo/registry"
  cp -r "$src/bindings/installed/rust" "$work/rust"
  mkdir -p "$work/rust/.cargo" "$work/cargo-home"
  printf '[patch.crates-io]\nlibrig = { path = "%s" }\nlibrig-sys = { path = "%s" }\n' \
    "$prefix/share/cargo/registry/librig-0.1.0" "$prefix/share/cargo/registry/librig-sys-0.1.0" \
    >"$work/rust/.cargo/config.toml"
  (cd "$work/rust" && env PKG_CONFIG_PATH="$pc" CARGO_HOME="$work/cargo-home" CARGO_TARGET_DIR="$work/rust-target" \
    RUSTC="$rustc" "$cargo" build --offline -q >"$work/rust.log" 2>&1 && "$work/rust-target/debug/hello") >"$work/rust.out" 2>&1 ||
    cat "$work/rust.log" >>"$work/rust.out"
  step "Rust program on the packaged crates librig and librig-sys" "$work/rust.out"
fi

if [ -n "$ocamlfind" ]; then
  echo "== OCaml: a program through findlib"
  mkdir -p "$work/ocaml"
  cp "$src/bindings/installed/ocaml/hello.ml" "$work/ocaml/"
  ocamlpath=$(dirname "$(find "$prefix" -name META -path '*/rig/META' | head -n1)")
  ocamlpath=$(dirname "$ocamlpath")
  # -thread: ctypes.foreign, under rig, uses threads (as any ocamlfind build of a threaded package)
  (cd "$work/ocaml" && OCAMLPATH="$ocamlpath" "$ocamlfind" ocamlopt -thread -package rig -linkpkg hello.ml -o hello \
    >"$work/ocaml.log" 2>&1 && ./hello) >"$work/ocaml.out" 2>&1 || cat "$work/ocaml.log" >>"$work/ocaml.out"
  step "OCaml program through findlib (OCAMLPATH=$ocamlpath)" "$work/ocaml.out"
fi
echo "bindings-installed: $passed passed, $failed failed"
[ "$failed" = 0 ]
