#!/bin/sh
# exports: librig exports exactly the rig_* functions its installed headers declare (rig.h, rig_mapped.h,
# rig_load.h, rig_interop.h): nothing else (the version script hides the C++ inside), no test hook (rig_testing.h's are
# in the tests' archive only), nothing the headers lack, nothing the headers have that the library lacks,
# each under the version node. soname: the soname is librig.so.SOVERSION.
#   exports_test.sh exports|soname LIBRARY HEADER[,HEADER...] SOVERSION
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
hooks=$(grep '^rig_testing_' "$tmp/exported" || true)
if [ -n "$hooks" ]; then
  echo "librig exports test hooks (they belong in the tests' archive):" >&2
  echo "$hooks" >&2
  exit 1
fi
# every function the headers declare with RIG_API (joined lines: declarations span several)
for h in $(echo "$header" | tr ',' ' '); do cat "$h"; done | tr '\n' ' ' | grep -o 'RIG_API[^;(]*(' | grep -o 'rig_[a-z0-9_]*($' | tr -d '(' | sort -u >"$tmp/declared"
if ! diff -u "$tmp/declared" "$tmp/exported"; then
  echo "the headers' RIG_API functions (-) and librig's exports (+) differ" >&2
  exit 1
fi
echo "$(wc -l <"$tmp/exported") symbols exported, all rig_*, all declared in the public headers, no test hook"
# every exported symbol carries the version node
unversioned=$(objdump -T "$lib" | awk '/ DF \.text/ && $NF ~ /^rig_/ && $(NF-1) !~ /RIG_/ { print $NF }')
[ -z "$unversioned" ] || { echo "exports without a version node: $unversioned" >&2; exit 1; }
