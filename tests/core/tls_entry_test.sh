#!/bin/sh
# tls-entry: the last-error flag every C entry clears is reached with no call: rig::error_set is declared
# constinit (src/core/error.h), so no object of the engine refers to its C++ thread_local wrapper or init
# function (a GOT load and a branch per entry, and the construct whose null test GCC 12 miscompiles under
# -fsanitize=null once ld relaxes the access: bench/README.md, "Issue 14: the UBSan report"), and
# rig_submit in librig.so calls no __tls_get_addr (the flag is initial-exec: one store off %fs).
#   tls_entry_test.sh LIBRIG_SO RIG_INTERNAL_ARCHIVE
set -eu
lib=$1 archive=$2
status=0
# _ZTW / _ZTH: the wrapper and the init function of a thread_local, named after the variable.
wrapped=$(nm -A "$archive" 2>/dev/null | grep -E '_ZT[WH]N3rig9error_setE' || true)
if [ -n "$wrapped" ]; then
  echo "objects reach rig::error_set through its thread_local wrapper (is it still constinit?):" >&2
  echo "$wrapped" >&2
  status=1
fi
body=$(objdump -d --no-show-raw-insn --disassemble=rig_submit "$lib")
echo "$body" | grep -q '<rig_submit>:' || { echo "no rig_submit in $lib" >&2; exit 1; }
if echo "$body" | grep -q '__tls_get_addr'; then
  echo "rig_submit calls __tls_get_addr:" >&2
  echo "$body" | grep -B4 '__tls_get_addr' >&2
  status=1
fi
stores=$(echo "$body" | grep -c 'movb  *\$0x0,%fs:' || true)
[ "$stores" -ge 1 ] || { echo "rig_submit clears no %fs-relative byte: where did the clear go?" >&2; status=1; }
[ $status = 0 ] && echo "rig_submit: $stores store(s) of 0 off %fs, no __tls_get_addr; no rig::error_set wrapper in the archive"
exit $status
