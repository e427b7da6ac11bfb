#!/bin/sh
# Compares the built librig with the committed baseline abi/librig.abi (abidiff). Fails on an
# incompatible change (abidiff bit 8: a removed or changed function, a changed type) and on abidiff's own
# errors; a compatible change (bit 4: an added function) passes and is printed, as a reminder to update
# the baseline at release. Skips (77) when the library carries no DWARF (a build without -g), where
# abidiff could compare symbols only and would call every type changed.
#   abi/check.sh LIBRARY BASELINE INCLUDE_DIR
set -u
lib=$1 baseline=$2 inc=$3
if ! readelf -S "$lib" | grep -q '\.debug_info'; then
  echo "SKIP abi: $lib has no debug info (configure with -g, e.g. buildtype=debugoptimized)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rig-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
abidw --headers-dir "$inc" --no-corpus-path --no-show-locs --drop-private-types --exported-interfaces-only --out-file "$tmp/current.abi" "$lib" || {
  echo "abidw failed on $lib" >&2
  exit 1
}
abidiff --no-added-syms "$baseline" "$tmp/current.abi" >"$tmp/report"
rc=$?
abidiff "$baseline" "$tmp/current.abi" >"$tmp/full" 2>&1 || true
cat "$tmp/full"
if [ $((rc & 3)) -ne 0 ]; then
  echo "abidiff failed (exit $rc)" >&2
  exit 1
fi
# abidiff counts a changed type under a kept function (a moved member, a changed parameter) as a mere
# "ABI change" (bit 4): for rig, whose structs and handles callers compile against, any Removed or
# Changed entry is incompatible; only additions (and the changes abidiff itself files as harmless, such
# as an enumerator added at the end) pass.
if [ $((rc & 8)) -ne 0 ] || grep -Eq '^ *\[D\]|[1-9][0-9]* (Removed|Changed)' "$tmp/full"; then
  echo "INCOMPATIBLE ABI change against abi/librig.abi: bump rig_soversion in meson.build and run abi/update.sh" >&2
  # abidiff's has_data_member_inserted_at suppression also hid a moved member when tried (2.2), so an
  # append is judged by a person, not filtered here
  echo "(a field appended to a struct that starts with its size is compatible by rig.h's contract: if the" >&2
  echo " report shows only a 'data member insertion' at the old end, run abi/update.sh without the bump)" >&2
  exit 1
fi
if [ $((rc & 4)) -ne 0 ] || grep -qi 'added' "$tmp/full"; then
  echo "compatible ABI change (additions): update abi/librig.abi with abi/update.sh when releasing"
else
  echo "ABI identical to abi/librig.abi"
fi
exit 0
