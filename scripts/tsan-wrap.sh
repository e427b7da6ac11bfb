#!/bin/sh
# meson test's wrapper in CI's ThreadSanitizer step: runs the test, and runs it once more only where TSan's
# own runtime died (its exit status, 66, with no report of a finding: a failed mmap of shadow memory or a
# CHECK inside the runtime, on a 2-core machine with two instrumented programs each reserving their fake
# GPUs' arenas). A data race, a lock inversion or any other report of TSan's fails the test as it is; so
# does a second death. CI's tsan step of 2026-12-03 lost one model test (exit 66 at 88 s) whose output was
# not kept; 14 more runs of that test here, most two at a time, found nothing to report.
log=$(mktemp "${TMPDIR:-/tmp}/tsan-wrap.XXXXXX") || exit 1
"$@" > "$log" 2>&1
rc=$?
cat "$log"
if [ $rc = 66 ] && ! grep -q 'WARNING: ThreadSanitizer:' "$log"; then
  echo "tsan-wrap: ThreadSanitizer's runtime stopped the program without a report (exit 66): running it once more"
  rm -f "$log"
  exec "$@"
fi
rm -f "$log"
exit $rc
