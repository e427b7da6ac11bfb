#!/bin/sh
# rig.h compiles alone as C99, C11, C++11, C++17 and C++20 with -Wall -Wextra -Werror -pedantic (and
# -Wconversion in C), from a file that includes nothing else first and uses its inline helpers.
#   header_test.sh INCLUDE_DIR CC CXX
set -eu
inc=$1 cc=$2 cxx=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rig-header.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/use.c" <<'SRC'
#include <rig.h>
#include <rig.h> /* twice: the guard holds */
int rig_header_use(void);
int rig_header_use(void) {
  rig_point p = rig_point_make(1, 2);
  rig_part part = {sizeof(rig_part), RIG_PART_COPY, 0, 1, 0, 0, RIG_WHOLE, 0, 0, 0, 0, 0, {0, 0, 0}, {0, 0, 0}, 0, 0, 0};
  rig_status s = RIG_OK;
  (void)part;
  return (int)rig_point_device_index(p) + (int)(rig_point_value(p) & 1u) + (int)s;
}
SRC
cp "$tmp/use.c" "$tmp/use.cpp"
fail=0
for std in c99 c11; do
  if $cc -std=$std -Wall -Wextra -Werror -pedantic -Wconversion -Wstrict-prototypes -I"$inc" -c "$tmp/use.c" -o "$tmp/c.o"; then
    echo "ok   C $std"
  else
    echo "FAIL C $std"; fail=1
  fi
done
for std in c++11 c++17 c++20; do
  if $cxx -std=$std -Wall -Wextra -Werror -pedantic -I"$inc" -c "$tmp/use.cpp" -o "$tmp/cxx.o"; then
    echo "ok   C++ $std"
  else
    echo "FAIL C++ $std"; fail=1
  fi
done
exit $fail
