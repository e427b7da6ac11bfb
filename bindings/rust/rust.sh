#!/bin/sh
# The Rust crates librig-sys and librig with Debian's toolchain (/usr/bin/cargo, what CI has; a rustup
# cargo earlier in PATH is not used), offline: crates.io's place is taken by Debian's packaged crate
# sources (RIG_CARGO_REGISTRY, default /usr/share/cargo/registry: `log` for the feature of that name,
# librust-log-dev); Cargo.lock is committed and --locked keeps cargo from rewriting it in the source tree.
# build, test and clippy build with every feature (`log` included).
#   rust.sh build|test|clippy|package SOURCE_DIR BUILD_DIR LIB_DIR CARGO RUSTC
#     package: `cargo package --offline` of both crates; librig's packaged manifest asks for librig-sys
#     from the registry, so BUILD_DIR/vendor, a directory source holding the packaged librig-sys and
#     links to Debian's crates, stands in for crates.io (a CARGO_HOME of its own). Both .crate files end in BUILD_DIR/vendor too, for a
#     program that depends on the packaged crates (tests/install).
#   rust.sh check-sys SOURCE_DIR BUILD_DIR INCLUDE_DIR BINDGEN
#   rust.sh install BUILD_DIR REGISTRY_DIR
#     (meson install) copies the packaged crates, unpacked with their .cargo-checksum.json, from
#     BUILD_DIR/vendor to DESTDIR/REGISTRY_DIR: a cargo directory source in the layout of Debian's
#     /usr/share/cargo/registry, which a program names in its .cargo/config.toml.
set -eu
mode=$1 src=$2 build=$3
case "$mode" in
install)
  vendor=$2 dest=${DESTDIR:-}$3
  mkdir -p "$dest"
  for crate in librig-sys-0.1.0 librig-0.1.0; do
    [ -f "$vendor/vendor/$crate/.cargo-checksum.json" ] || { echo "rust.sh install: $vendor/vendor/$crate was not packaged" >&2; exit 1; }
    rm -rf "${dest:?}/$crate"
    cp -r "$vendor/vendor/$crate" "$dest/"
  done
  exit 0 ;;
check-sys)
  inc=$4 bindgen=$5
  mkdir -p "$build"
  PATH="$(dirname "$bindgen"):$PATH" "$src/librig-sys/bindgen.sh" "$inc" "$build/bindings.rs"
  # bindgen formats its output with rustfmt only where one is installed (Debian's CI image has none):
  # compare the tokens, not the layout (whitespace dropped, and the trailing commas rustfmt adds)
  norm() { tr -d ' \t\n' <"$1" | sed -e 's/,\([])}>]\)/\1/g'; }
  norm "$src/librig-sys/src/bindings.rs" >"$build/committed.tokens"
  norm "$build/bindings.rs" >"$build/generated.tokens"
  if ! cmp -s "$build/committed.tokens" "$build/generated.tokens"; then
    diff -u "$src/librig-sys/src/bindings.rs" "$build/bindings.rs" || true
    echo "librig-sys/src/bindings.rs is not what bindgen makes of rig.h: run" >&2
    echo "  bindings/rust/librig-sys/bindgen.sh include bindings/rust/librig-sys/src/bindings.rs" >&2
    exit 1
  fi
  echo "librig-sys/src/bindings.rs matches rig.h"
  exit 0 ;;
esac
lib=$4 cargo=$5 rustc=$6
export CARGO_HOME="$build/cargo-home" CARGO_TARGET_DIR="$build/target" CARGO_NET_OFFLINE=true
export RUSTC="$rustc" RUSTDOC="$(dirname "$rustc")/rustdoc" RIG_LIB_DIR="$lib" RUST_BACKTRACE=0
export PATH="$(dirname "$cargo"):$PATH" # cargo's subcommands (cargo-clippy) from the same toolchain
registry=${RIG_CARGO_REGISTRY:-/usr/share/cargo/registry}
ls -d "$registry"/log-0.4.* >/dev/null 2>&1 || { echo "rust.sh: no log crate under $registry (Debian: librust-log-dev)" >&2; exit 1; }
mkdir -p "$CARGO_HOME"
cat >"$CARGO_HOME/config.toml" <<TOML
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "$registry"
TOML
cd "$src"
case "$mode" in
build) exec "$cargo" build --offline --locked --workspace --all-targets --all-features ;;
test) exec "$cargo" test --offline --locked --workspace --all-features -- --test-threads=1 --nocapture ;;
clippy)
  if ! command -v cargo-clippy >/dev/null; then echo "SKIP: cargo-clippy not found (Debian: rust-clippy)"; exit 77; fi
  exec "$cargo" clippy --offline --locked --workspace --all-targets --all-features -- -D warnings ;;
package)
  vendor="$build/vendor"
  # a CARGO_HOME of its own: build, test and clippy may run beside this one with theirs
  export CARGO_HOME="$build/cargo-home-package"
  rm -rf "$vendor" "$CARGO_TARGET_DIR/package"
  mkdir -p "$vendor" "$CARGO_HOME"
  # Debian's crates (librig's optional `log`) beside the packaged librig-sys, as links
  for crate in "$registry"/*/; do
    [ -f "$crate/.cargo-checksum.json" ] && ln -s "${crate%/}" "$vendor/"
  done
  cat >"$CARGO_HOME/config.toml" <<TOML
[source.crates-io]
replace-with = "rig-vendor"
[source.rig-vendor]
directory = "$vendor"
TOML
  # a directory source: each crate unpacked, with the sha256 of every file and of the .crate
  add() {
    crate="$CARGO_TARGET_DIR/package/$1-0.1.0.crate"
    tar -C "$vendor" -xzf "$crate"
    cp "$crate" "$vendor/"
    (cd "$vendor/$1-0.1.0" && python3 - "$crate" <<'PY'
import hashlib, json, os, sys
def sha(p):
    with open(p, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()
files = {os.path.relpath(os.path.join(d, f)): sha(os.path.join(d, f)) for d, _, fs in os.walk(".") for f in fs}
json.dump({"files": files, "package": sha(sys.argv[1])}, open(".cargo-checksum.json", "w"))
PY
    )
  }
  "$cargo" package --offline --locked --allow-dirty -p librig-sys
  add librig-sys
  "$cargo" package --offline --allow-dirty -p librig
  add librig
  ls "$vendor"/*.crate ;;
esac
