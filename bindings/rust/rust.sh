#!/bin/sh
# The Rust crates with Debian's toolchain, offline (no crate from a registry; Cargo.lock is committed and
# --locked keeps cargo from rewriting it in the source tree).
#   rust.sh build|test SOURCE_DIR BUILD_DIR LIB_DIR CARGO RUSTC
#   rust.sh check-sys SOURCE_DIR BUILD_DIR INCLUDE_DIR BINDGEN
set -eu
mode=$1 src=$2 build=$3
case "$mode" in
check-sys)
  inc=$4 bindgen=$5
  mkdir -p "$build"
  PATH="$(dirname "$bindgen"):$PATH" "$src/rig-sys/bindgen.sh" "$inc" "$build/bindings.rs"
  # bindgen formats its output with rustfmt only where one is installed (Debian's CI image has none):
  # compare the tokens, not the layout (whitespace dropped, and the trailing commas rustfmt adds)
  norm() { tr -d ' \t\n' <"$1" | sed -e 's/,\([])}>]\)/\1/g'; }
  norm "$src/rig-sys/src/bindings.rs" >"$build/committed.tokens"
  norm "$build/bindings.rs" >"$build/generated.tokens"
  if ! cmp -s "$build/committed.tokens" "$build/generated.tokens"; then
    diff -u "$src/rig-sys/src/bindings.rs" "$build/bindings.rs" || true
    echo "rig-sys/src/bindings.rs is not what bindgen makes of rig.h: run" >&2
    echo "  bindings/rust/rig-sys/bindgen.sh include bindings/rust/rig-sys/src/bindings.rs" >&2
    exit 1
  fi
  echo "rig-sys/src/bindings.rs matches rig.h"
  exit 0 ;;
esac
lib=$4 cargo=$5 rustc=$6
export CARGO_HOME="$build/cargo-home" CARGO_TARGET_DIR="$build/target" CARGO_NET_OFFLINE=true
export RUSTC="$rustc" RUSTDOC="$(dirname "$rustc")/rustdoc" RIG_LIB_DIR="$lib" RUST_BACKTRACE=0
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$src"
if [ "$mode" = build ]; then
  exec "$cargo" build --offline --locked --workspace --all-targets
fi
exec "$cargo" test --offline --locked --workspace -- --test-threads=1 --nocapture
