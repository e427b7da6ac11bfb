#!/bin/sh
# exports: librig exports exactly the rig_* functions rig.h declares: nothing else (the version script
# hides the C++ inside), nothing the header lacks, nothing the header has that the library lacks, each
# under the version node. soname: the soname is librig.so.SOVERSION.
#   exports_test.sh exports|soname LIBRARY HEADER SOVERSION
set -eu
mode=$1 lib=$2 header=$3 soversion=$4
if [ "$mode" = soname ]; then
  soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
  [ "$soname" = "librig.so.$soversion" ] || { echo "soname is '$soname', want librig.so.$soversion" >&2; exit 1; }
  echo "soname $soname"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rig-exports.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# defined dynamic symbols, without the version node (an absolute symbol named after the version, RIG_0)
nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
bad=$(grep -v '^rig_' "$tmp/exported" || true)
if [ -n "$bad" ]; then
  echo "exported beyond rig_*:" >&2
  echo "$bad" >&2
  exit 1
fi
# every function the public headers declare with RIG_API (rig.h and the rig_*.h beside it, such as
# rig_load.h; joined lines: declarations span several)
cat "$header" "$(dirname "$header")"/rig_*.h 2>/dev/null | tr '\n' ' ' | grep -o 'RIG_API[^;(]*(' | grep -o 'rig_[a-z0-9_]*($' | tr -d '(' | sort -u >"$tmp/declared"
if ! diff -u "$tmp/declared" "$tmp/exported"; then
  echo "rig.h's RIG_API functions (-) and librig's exports (+) differ" >&2
  exit 1
fi
echo "$(wc -l <"$tmp/exported") symbols exported, all rig_*, all declared in rig.h"
# every exported symbol carries the version node
unversioned=$(objdump -T "$lib" | awk '/ DF \.text/ && $NF ~ /^rig_/ && $(NF-1) !~ /RIG_/ { print $NF }')
[ -z "$unversioned" ] || { echo "exports without a version node: $unversioned" >&2; exit 1; }
