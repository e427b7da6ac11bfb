#!/bin/sh
# Writes the ABI baseline abi/librig.abi from a built librig (abigail-tools' abidw, public types only:
# those reachable from include/). Run it when a release fixes the ABI, or after a deliberate change
# that also bumped rig_soversion in meson.build; commit the result.
#   abi/update.sh BUILD_DIR/librig.so
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec abidw --headers-dir "$here/../include" --no-corpus-path --no-comp-dir-path --no-show-locs --drop-private-types --exported-interfaces-only \
  --out-file "$here/librig.abi" "$1"
