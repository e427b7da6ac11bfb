#!/bin/sh
# Writes debian/librig0.symbols from a built librig: every symbol the version script src/capi/rig.map
# exports (its node, RIG_0, names the ABI), each at the version that first shipped it. Existing entries
# keep their version; symbols new to this build get the changelog's version. Run after adding to rig.h:
#   debian/update-symbols.sh build/librig.so.0
set -eu
cd "$(dirname "$0")/.."
lib=${1:?usage: debian/update-symbols.sh path/to/librig.so.0}
node=$(sed -n 's/^\([A-Z_0-9]*\) *{.*/\1/p' src/capi/rig.map | head -1)
version=$(dpkg-parsechangelog -S Version)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/DEBIAN" "$tmp/usr/lib"
cp "$lib" "$tmp/usr/lib/librig.so.0"
# dpkg-gensymbols reads the library's dynamic symbols and merges them with the committed file.
dpkg-gensymbols -q -plibrig0 -v"$version" -P"$tmp" -e"$tmp/usr/lib/librig.so.0" -Idebian/librig0.symbols \
  -O"$tmp/symbols" -c0 || true
{
  echo "librig.so.0 librig0 #MINVER#"
  echo "* Build-Depends-Package: librig-dev"
  grep "@$node " "$tmp/symbols" | sed 's/ *$//' | sort
} > debian/librig0.symbols
echo "debian/librig0.symbols: $(grep -c "@$node " debian/librig0.symbols) symbols of node $node"
