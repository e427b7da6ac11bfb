#!/bin/sh
# Generates rig-sys's raw declarations from rig_mapped.h (which includes rig.h), rig_load.h and rig_interop.h
# with Debian's bindgen (0.60), through a header that includes the three (bindgen reads one). The output is committed
# as src/bindings.rs (so that building needs neither bindgen nor libclang); the meson test
# binding-rust-sys-matches-header runs this again and fails if the committed file differs.
#   bindgen.sh INCLUDE_DIR [OUTPUT]   (OUTPUT defaults to stdout)
set -eu
inc=$1
out=${2:--}
all=$(mktemp --suffix=.h)
trap 'rm -f "$all"' EXIT
printf '#include <rig_mapped.h>\n#include <rig_load.h>\n#include <rig_interop.h>\n' >"$all"
set -- "$all" \
  --allowlist-function 'rig_.*' --allowlist-type 'rig_.*' --allowlist-var 'RIG_.*' \
  --blocklist-item RIG_WHOLE --size_t-is-usize --no-doc-comments \
  -- -I"$inc"
if [ "$out" = - ]; then bindgen "$@"; else bindgen -o "$out" "$@"; fi
