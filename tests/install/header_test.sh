#!/bin/sh
# The installed headers (rig.h, and rig_mapped.h, rig_load.h, rig_interop.h and rig_keep.h, which include it) compile alone as C99, C11, C++11,
# C++17 and C++20 with -Wall -Wextra -Werror -pedantic (and -Wconversion in C), from a file that includes
# nothing else first and uses their inline helpers; under clang too where it is installed, where the
# nullability markers are real. Then every enum of every header, found by reading the headers, is asserted
# (at compile time) to be 4 bytes when built with -fshort-enums: its *_MAX_ENUM member keeps it 32 bits,
# so a value a binding passes, or one rig writes through an enum pointer, fits.
#   header_test.sh INCLUDE_DIR CC CXX   (CC and CXX may be commands of several words: "ccache cc")
set -eu
inc=$1 cc=$2 cxx=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rig-header.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/use.c" <<'SRC'
#include <rig_mapped.h>
#include <rig.h> /* twice: the guards hold */
#include <rig_mapped.h>
#include <rig_load.h>
#include <rig_load.h>
#include <rig_interop.h>
#include <rig_interop.h>
#include <rig_keep.h>
#include <rig_keep.h>
int rig_header_use(void);
int rig_header_use(void) {
  rig_point p = rig_point_make(1, 2);
  rig_part part = {sizeof(rig_part), RIG_PART_COPY, 0, 1, 0, 0, RIG_WHOLE, 0, 0, 0, 0, 0, {0, 0, 0}, {0, 0, 0}, 0, 0, 0};
  rig_status s = RIG_OK;
  rig_verdict_kind k = RIG_VERDICT_USABLE;
  rig_load_options o = {sizeof(rig_load_options), RIG_LOAD_PATH_AUTO, RIG_LOAD_IO_AUTO, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  rig_load_path lp = o.path;
  rig_interop_kind ik = RIG_INTEROP_STREAM_WAIT;
  rig_keep_options ko = {sizeof(rig_keep_options), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  struct DLManagedTensor *t = 0;
  (void)part;
  (void)ko;
  (void)t;
  return (int)rig_point_device_index(p) + (int)(rig_point_value(p) & 1u) + (int)s + (int)k + (int)lp + (int)ik;
}
SRC
cp "$tmp/use.c" "$tmp/use.cpp"
fail=0
compile() {  # compile LABEL COMMAND...
  label=$1
  shift
  if "$@"; then echo "ok   $label"; else echo "FAIL $label"; fail=1; fi
}
for std in c99 c11; do
  compile "C $std" $cc -std=$std -Wall -Wextra -Werror -pedantic -Wconversion -Wstrict-prototypes -I"$inc" -c "$tmp/use.c" -o "$tmp/c.o"
done
for std in c++11 c++17 c++20; do
  compile "C++ $std" $cxx -std=$std -Wall -Wextra -Werror -pedantic -I"$inc" -c "$tmp/use.cpp" -o "$tmp/cxx.o"
done
if command -v clang >/dev/null 2>&1; then
  compile "clang C11 (nullability markers)" clang -std=c11 -Wall -Wextra -Werror -pedantic -Wnullability-completeness -I"$inc" -c "$tmp/use.c" -o "$tmp/clang.o"
else
  echo "note: clang not installed, its pass (nullability markers) not run"
fi

# -fshort-enums: one static assertion per enum of the headers, the list read from the headers themselves.
enums=$(cat "$inc"/rig.h "$inc"/rig_mapped.h "$inc"/rig_load.h "$inc"/rig_interop.h "$inc"/rig_keep.h | tr '\n' ' ' | grep -o 'typedef enum [a-z_0-9]* {' | awk '{print $3}' | sort -u)
count=$(echo "$enums" | grep -c . || true)
if [ "$count" -lt 9 ]; then
  echo "FAIL found only $count enums in the headers (want every one of them)"
  exit 1
fi
{
  echo '#include <rig_mapped.h>'
  echo '#include <rig_load.h>'
  echo '#include <rig_interop.h>'
  echo '/* C99 has no _Static_assert: a negative array size fails the build instead. */'
  for e in $enums; do
    echo "typedef char ${e}_is_4_bytes[sizeof(${e}) == 4 ? 1 : -1];"
  done
  echo 'int rig_enum_width_use(void);'
  echo 'int rig_enum_width_use(void) { return 0; }'
} >"$tmp/enums.c"
cp "$tmp/enums.c" "$tmp/enums.cpp"
compile "C99 -fshort-enums: $count enums of 4 bytes" $cc -std=c99 -fshort-enums -Wall -Wextra -Werror -Wno-unused-local-typedefs -I"$inc" -c "$tmp/enums.c" -o "$tmp/e.o"
compile "C++17 -fshort-enums: $count enums of 4 bytes" $cxx -std=c++17 -fshort-enums -Wall -Wextra -Werror -Wno-unused-local-typedefs -I"$inc" -c "$tmp/enums.cpp" -o "$tmp/e2.o"
# The assertion can fail: an enum without its *_MAX_ENUM member is one byte under -fshort-enums.
printf 'typedef enum probe_small { PROBE_A = 1 } probe_small;\ntypedef char probe_small_is_4_bytes[sizeof(probe_small) == 4 ? 1 : -1];\n' >"$tmp/small.c"
if $cc -std=c99 -fshort-enums -c "$tmp/small.c" -o "$tmp/small.o" 2>/dev/null; then
  echo "FAIL the -fshort-enums assertion passed for an enum without a MAX_ENUM member"
  fail=1
else
  echo "ok   the assertion fails for an enum without a MAX_ENUM member"
fi
exit $fail
