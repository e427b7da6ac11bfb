#!/usr/bin/env bash
# The one H200 run: unpack the carried Vulkan loader and cmocka, then each area's script with its own time
# budget, then pack every log into $OUT/logs.tgz and the summaries into $OUT/summary.txt.
# Usage (repository root, on the device machine): scripts/gpu/all.sh BUILD_DIR [AREA...]
set -u
build=${1:?usage: scripts/gpu/all.sh BUILD_DIR [AREA...]}
shift
areas=${*:-cuda mapped hip vulkan}
final=${OUT:-/tmp/out}
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done
ldconfig 2>/dev/null
export OUT=/tmp/gpu-logs
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="$PWD/$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# load: run alone (scripts/gpu/all.sh BUILD load); LOAD_BUDGET overrides its seconds (two file sizes in one call)
declare -A budget=([cuda]=330 [mapped]=200 [hip]=150 [vulkan]=150 [load]=${LOAD_BUDGET:-540} [interop]=420)
{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1; nproc
  for a in $areas; do
    echo "=== $a (budget ${budget[$a]:-120}s)"
    timeout --kill-after=5 "${budget[$a]:-120}" stdbuf -oL bash "scripts/gpu/$a.sh" "$build" 2>&1 | tail -60
    echo "=== $a rc=${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$final/summary.txt"
tar czf "$final/logs.tgz" -C "$OUT" . 2>/dev/null
