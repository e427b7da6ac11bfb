#!/bin/sh
# Every test of rig, as CI runs it: the plain build (all suites, bindings, install and ABI checks),
# AddressSanitizer+UndefinedBehaviorSanitizer, ThreadSanitizer, and the mutation check of the six rules.
# Vulkan runs for real on Mesa's lavapipe; CUDA and HIP run against the driver doubles in tests/doubles.
set -eu
cd "$(dirname "$0")/.."
# The tools under test are Debian's (deps.sh installs them): a python3, cargo or go that a user's PATH puts
# first (pyenv, rustup) has neither Debian's modules (pytest, mesonpy) nor its install scheme, and the
# Debian package built with pyenv's python3 put the module in lib/python3.11/site-packages.
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH export PATH
scripts/deps.sh
out=${RIG_TEST_DIR:-build-test}
start=$(date +%s)
# After each step: where CI's hour goes, and the disk left (CI's machine ran out of it on 2026-12-05).
took() { echo "    ($(( $(date +%s) - start )) s since the start, $(df -Ph . | awk 'NR == 2 { print $4 }') left on disk)"; }
# CI's machine may have little disk: the run of 2026-12-05 ran out of it with every build kept (14 GB). With
# RIG_TEST_TIDY=1 (.ci/run sets it) a build directory is removed once no later step reads it, so the run
# holds one large build at a time.
tidy() { if [ "${RIG_TEST_TIDY:-0}" = 1 ]; then rm -rf "$@"; fi; }
mkdir -p "$out"
status=0
# The one list of build dependencies: scripts/deps.sh, debian/control and the Python README against meson.build.
echo "=== deps-check"
if scripts/deps-check.sh; then echo "=== deps-check: passed"; else echo "=== deps-check: FAILED"; status=1; fi
took
run() {  # name, build dir, meson options...
  name=$1 dir=$2
  shift 2
  echo "=== $name"
  if [ -d "$dir" ]; then set -- --reconfigure "$@"; fi
  meson setup "$dir" "$@" > "$dir.setup.log" 2>&1 || { echo "=== $name: SETUP FAILED"; tail -20 "$dir.setup.log"; status=1; return; }
  ninja -C "$dir" >/dev/null || { echo "=== $name: BUILD FAILED"; ninja -C "$dir" | tail -40; status=1; return; }
  if meson test -C "$dir" --print-errorlogs --num-processes 2 $SUITES ${WRAP:+--wrap="$WRAP"}; then echo "=== $name: passed"; else echo "=== $name: FAILED"; status=1; fi
  took
}
SUITES="--no-suite fuzz"
RIG_REQUIRE=${RIG_REQUIRE:-vulkan} export RIG_REQUIRE
run plain "$out/plain"
# Packaging, each step bounded: the Python wheel (pip wheel . --no-build-isolation) tested in a fresh venv
# with no LD_LIBRARY_PATH, then the Debian packages built, linted, installed, smoke-tested and removed.
echo "=== python-wheel"
if timeout 900 scripts/python-wheel-check.sh "$out/python-wheel" "$out/plain"; then
  echo "=== python-wheel: passed"; else echo "=== python-wheel: FAILED"; status=1; fi
took
echo "=== debian"
if timeout 540 scripts/debian-check.sh "$out/debian"; then
  echo "=== debian: passed"; else echo "=== debian: FAILED"; status=1; fi
took
echo "=== fuzz: the safetensors and GGUF header parsers, 20 s of libFuzzer each (clang only)"
if meson test -C "$out/plain" --suite fuzz --print-errorlogs; then
  echo "=== fuzz: passed"; else echo "=== fuzz: FAILED"; status=1; fi
took
echo "=== valgrind: the core suites under memcheck (shorter model run)"
if RIG_MODEL_PROGRAMS=300 meson test -C "$out/plain" --suite core --print-errorlogs --timeout-multiplier 20 \
    --wrap="valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite -q --suppressions=$PWD/tests/valgrind.supp"; then
  echo "=== valgrind: passed"; else echo "=== valgrind: FAILED"; status=1; fi
took
echo "=== mutation: each rule's code compiled out must fail its rule test"
if MUTATION_DIR="$out/mutation" tests/core/mutation.sh; then
  echo "=== mutation: passed"; else echo "=== mutation: FAILED"; status=1; fi
took
# What no later step reads goes before the sanitizer builds start (RIG_TEST_TIDY=1 only: a developer's
# rerun keeps its build directories and recompiles only what changed).
tidy "$out/plain" "$out/python-wheel" "$out/debian" "$out/mutation"
# Sanitizer builds keep line tables only (-g1: a report still names function, file and line). With full
# debug information each of their 68 test programs was about 100 MB, 7.3 GB for the AddressSanitizer build
# alone; with -g1, 4.9 GB.
SANITIZER_DEBUG="-Dc_args=-g1 -Dcpp_args=-g1"
# Sanitizer builds run the C ABI and ordering suites (bindings run in the plain build), so they build no
# bindings and no man page either (a minute of each sanitizer build's compiling, 2026-12-05).
SUITES="--no-suite bindings --no-suite install --no-suite bench --no-suite fuzz"
SANITIZER_BUILD="-Dbench=false -Dbindings=disabled -Dman=disabled $SANITIZER_DEBUG"
# The model suites run 100 random programs a kind under the sanitizers (the plain build runs the full
# count): their instrumented runs were most of the hour CI allows (150 until 2026-12-04, when the whole run
# took 61-65 minutes on 2 cores).
RIG_MODEL_PROGRAMS=100 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  run asan+ubsan "$out/asan" -Db_sanitize=address,undefined -Db_lundef=false $SANITIZER_BUILD
tidy "$out/asan"
# ThreadSanitizer stops a program at its first report (halt_on_error): a must-fail twin on a fake that drops
# in-queue waits races on every element it checks, and TSan unwinds a stack for each racy access, which took
# nccl_step's two-GPU twin past its 120 s timeout (2026-12-01); a report fails a test either way. The fakes'
# device arena is 16 GiB there, not 256: in that run one model program died of TSan failing to map memory
# (ENOMEM) beside the 256 GiB reservation, and the tests use a few MiB of it.
# Each test runs under scripts/tsan-wrap.sh: once more where TSan's runtime itself died without a report.
# The model suites run 50 programs a kind here: under TSan each program costs about five times what it
# does under ASan, and at 100 their runs were 800 s of the run's 70 minutes on 2 cores (2026-12-05). Fifty
# programs still run the model's threaded phase (two threads submitting at once on disjoint devices, beside
# the fakes' own threads) fifty times a kind; test_threads races the engine on its own.
WRAP=$PWD/scripts/tsan-wrap.sh RIG_MODEL_PROGRAMS=50 TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}halt_on_error=1 \
  FAKE_DEVICE_ARENA_GIB=16 run tsan "$out/tsan" -Db_sanitize=thread -Db_lundef=false $SANITIZER_BUILD
tidy "$out/tsan"
[ $status = 0 ] && echo "ALL PASSED" || echo "SOME FAILED"
exit $status
