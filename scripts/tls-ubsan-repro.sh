#!/bin/sh
# The cause of the UBSan report that reverted the initial-exec error flag (dcf5a35), reproduced outside rig
# (bench/README.md, "Issue 14: the UBSan report"). Three small C++ files, built as CI's asan+ubsan stage
# builds rig (-O2 -fPIC -fsanitize=address,undefined), then linked two ways:
#   - into a PIE executable, as the tests link rig's archive: ld relaxes the initial-exec access to local-exec
#     and rewrites `addq flag@gottpoff(%rip), %reg` into `leaq OFFSET(%reg), %reg`, which sets no flags;
#   - into a shared library, as librig.so: the add stays and the null test is right.
# With `extern thread_local bool` GCC tests the TLS wrapper's reference for null with the add's flags, so the
# executable reports "store to null pointer" at a store to a valid address. With `constinit` there is no
# wrapper and no test. Exits 0 when the constinit declaration (rig's) runs clean in both links; prints what
# the plain declaration does with this compiler (a GCC that keeps the flags off that add would run clean).
#   scripts/tls-ubsan-repro.sh [C++ compiler]
set -eu
cxx=${1:-c++}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rig-tls-ubsan.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
cat > entry.cpp <<'CPP'
#include <string>
#include "flag.h"
extern "C" int work(int);
extern "C" const char *msg();
void fail(int, const char *);
// As rig_probe: clear at entry, keep a message across a call, clear again on success.
extern "C" int entry(int x) {
  clear_error();
  std::string kept = msg();
  int s = work(x);
  if (s != 0) fail(s, kept.c_str());
  else clear_error();
  return s;
}
CPP
cat > main.cpp <<'CPP'
#include <cstdio>
#include "flag.h"
extern "C" int entry(int);
extern "C" int work(int x) { return x; }
extern "C" const char *msg() { return "a message longer than the small-string buffer"; }
void fail(int, const char *) { error_set = true; }
int main() { error_set = true; int s = entry(0); std::printf("entry -> %d, flag %d\n", s, int(error_set)); }
CPP
flags="-std=c++20 -O2 -fPIC -fsanitize=address,undefined"
status=0
for decl in plain constinit; do
  ci=; [ $decl = constinit ] && ci=constinit
  printf '[[gnu::tls_model("initial-exec")]] extern thread_local %s bool error_set;\ninline void clear_error() noexcept { error_set = false; }\n' "$ci" > flag.h
  printf '#include "flag.h"\n[[gnu::tls_model("initial-exec")]] %s thread_local bool error_set = false;\n' "$ci" > flag.cpp
  for f in entry flag main; do $cxx $flags -c $f.cpp -o $f.o; done
  $cxx -fsanitize=address,undefined -pie main.o entry.o flag.o -o exe
  $cxx -fsanitize=address,undefined -shared entry.o flag.o -o libentry.so
  $cxx -fsanitize=address,undefined main.o -L. -lentry -Wl,-rpath,"$tmp" -o exe_so
  relaxed=$(objdump -d --no-show-raw-insn exe | awk '/mov +%fs:0x0,/ {a=NR; next} a && NR==a+1 && /lea +-?0x/ {b=NR; next}
    b && NR==b+1 && /\tje / {n++} {a=(NR==a)?a:0; b=(NR==b)?b:0} END {print n+0}')
  for e in exe exe_so; do
    if out=$(UBSAN_OPTIONS=halt_on_error=1 ./$e 2>&1); then verdict=clean; else verdict="UBSan: $(echo "$out" | grep -o 'runtime error: .*' | head -1)"; fi
    link=$([ $e = exe ] && echo "PIE executable (IE relaxed to LE, $relaxed lea-then-je site(s))" || echo "shared library (IE kept)")
    echo "$decl declaration, $link: $verdict"
    [ $decl = constinit ] && [ "$verdict" != clean ] && status=1
  done
done
exit $status
