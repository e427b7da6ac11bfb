#!/bin/sh
# Builds one libFuzzer harness with clang (address and undefined sanitizers) and runs it for a bounded
# time over the committed corpus. Usage: fuzz/run.sh CLANGXX SOURCE_ROOT WORK_DIR NAME SECONDS
# New inputs go to WORK_DIR (the build directory), never into the repository's corpus.
set -eu
cxx=$1 root=$2 work=$3 name=$4 seconds=$5
mkdir -p "$work/fuzz-$name-new"
"$cxx" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/include" -I"$root/src" \
  "$root/fuzz/fuzz_$name.cpp" "$root/src/load/table.cpp" "$root/src/load/safetensors.cpp" "$root/src/load/gguf.cpp" "$root/src/load/index.cpp" "$root/src/keep/protocol.cpp" \
  -o "$work/fuzz_$name"
exec "$work/fuzz_$name" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$work/fuzz-$name-new" "$root/fuzz/corpus/$name"
