#!/usr/bin/env bash
# The interop part of the H200 run (rig_interop.h). Builds nothing: uses the carried build directory.
# Usage (repository root): scripts/gpu/interop.sh BUILD_DIR
#   1. tests/interop's C tests on the real GPU with RIG_REQUIRE=cuda: native streams waiting for rig points
#      and giving points both ways (one GPU and, with two, across GPUs), events out and back, a point never
#      signaled timing out, wrapped device memory and its DLPack tensor, host descriptors (the wrong-kind
#      and loss cases are the fake's only: they skip, saying so).
#      Then the edge's cost promise (tests/interop/test_interop_cost.c): no heap allocation by rig.
#   1b. across processes on cuda:0 (tests/interop/test_interop_ipc.c, tests/interop/ipc_pair.c): CUDA IPC
#      memory and event handles exported, sent over a UNIX socket, imported by a second process; the same
#      through HIP's driver over the shim. With two GPUs, ipc_pair cuda:0 cuda:1: one process per GPU, the
#      buffer left on cuda:0 and copied out by the process on cuda:1, every byte checked.
#   1c. tests/interop/nccl_step.c: ncclAllReduce (NCCL loaded at run time, one rank on cuda:0) between two
#      rig kernels, ordered only through rig_stream_wait_point and rig_stream_point, checked element by element.
#      With two GPUs, nccl_step 200 cuda:0 cuda:1: one process, one rank per GPU, the all-reduce between the
#      GPUs ordered the same way on each side. With one GPU both two-GPU steps print "NOT RUN: needs two GPUs"
#      in the summary (counted apart: neither a pass nor a failure).
#   2. scripts/gpu/interop_torch.py through ctypes on BUILD_DIR/librig.so.0 (the machine's Python 3.12 cannot
#      import the SWIG module built for 3.11): a PyTorch tensor wrapped as a rig buffer, written by rig
#      kernels and read and written by torch on its own stream, ordered only by rig_stream_wait_point,
#      rig_stream_point and rig_buffer_stamp, checked element by element over 1000 rounds with no host
#      synchronisation; torch.from_dlpack and cupy.from_dlpack of rig buffers (same pointer, rig's bytes).
#   3. bench/interop's edge benchmark where the build has it (ratios against the same CUDA calls by hand).
# It should show: every step PASS in $OUT/interop/summary.txt, "PASS" on the last lines of
# interop-ipc-pair.log, interop-nccl-step.log and (two GPUs) interop-ipc-pair-2gpu.log and
# interop-nccl-step-2gpu.log, "0 mismatching elements" and "same pointer True, every element rig's: True" in
# interop-torch.log. INTEROP_SH_FAKE=path/to/libfakecuda.so rehearses it without a GPU (the torch part then
# only checks its ctypes layer; the fake's GPUs count as the machine's: FAKECUDA_DEVICES, default 2).
set -u
build=${1:?usage: scripts/gpu/interop.sh BUILD_DIR}
build=$(cd "$build" && pwd)
logs=${OUT:-/tmp/out}/interop
mkdir -p "$logs"
summary=$logs/summary.txt
: > "$summary"
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # libcmocka.so.0 lives in the build dir
if [ -n "${INTEROP_SH_FAKE:-}" ]; then
  export RIG_CUDA_LIBRARY=$INTEROP_SH_FAKE HIPSHIM_CUDA_LIBRARY=$INTEROP_SH_FAKE
else
  unset RIG_CUDA_LIBRARY
  export RIG_REQUIRE=cuda
fi
failures=0 not_run=0
if [ -n "${INTEROP_SH_FAKE:-}" ]; then
  gpus=${FAKECUDA_DEVICES:-2}
else
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fi
step() {  # step NAME TIMEOUT_S COMMAND...: logs to $logs/NAME.log, records PASS/FAIL/TIMEOUT with seconds
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  local verdict=PASS
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict=TIMEOUT; elif [ $rc -eq 77 ]; then
    # A program whose cases ran, some skipped with their reason (the fake's switches, two GPUs): reported as
    # what it is, its passed and skipped cases counted, neither a pass nor a failure (as vulkan.sh does).
    verdict="SKIP($(grep -c '^\[       OK \]' "$logs/$name.log") ok, $(grep '^\[  SKIPPED \] ' "$logs/$name.log" | grep -v 'test(s)' | sort -u | wc -l) skipped)"
  elif [ $rc -ne 0 ]; then verdict="FAIL(rc=$rc)"; fi
  case $verdict in PASS|SKIP*) ;; *) failures=$((failures + 1)) ;; esac
  printf '%-40s %-24s %4ds\n' "$name" "$verdict" $((SECONDS - t0)) | tee -a "$summary"
}
step_2gpu() {  # step_2gpu NAME TIMEOUT_S COMMAND...: step, where the machine has two GPUs; else says why not
  if [ "$gpus" -ge 2 ]; then
    step "$@"
  else
    not_run=$((not_run + 1))
    printf '%-40s NOT RUN: needs two GPUs (this machine has %s)\n' "$1" "$gpus" | tee -a "$summary"
  fi
}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1; python3 --version 2>&1
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1
  python3 -c 'import cupy; print("cupy", cupy.__version__)' 2>&1; } > "$logs/machine.txt"
step interop-cuda-c-tests 180 "$build/tests/interop/test_interop_cuda"
RIG_CUDA_TIMELINE=memops step interop-cuda-c-tests-memops 180 "$build/tests/interop/test_interop_cuda"
# The edge's cost promise on the real driver (tests/interop/test_interop_cost.c): rig allocates nothing on
# the heap in 2000 steady-state edges (the driver's own allocations are told apart by the call stack).
# Built in plain builds only (a sanitizer owns malloc).
if [ -x "$build/tests/interop/test_interop_cost_cuda" ]; then
  step interop-cuda-cost 120 "$build/tests/interop/test_interop_cost_cuda"
  RIG_CUDA_TIMELINE=memops step interop-cuda-cost-memops 120 "$build/tests/interop/test_interop_cost_cuda"
fi
# HIP's driver over the same GPU through the shim (tests/doubles/hip_shim), as scripts/gpu/hip.sh runs it.
RIG_HIP_LIBRARY=$build/tests/hip/libhipshim.so RIG_REQUIRE=hip step interop-hip-shim-c-tests 180 "$build/tests/interop/test_interop_hip"
# Across processes on cuda:0 (CUDA IPC handles): bad handles, an exited exporter, an unreached point of
# another process timing out; then the two-process example (every byte checked, the exporter's overwrite
# ordered after the importer's copy), and the same tests through HIP's driver over the shim.
step interop-cuda-ipc-tests 180 "$build/tests/interop/test_interop_ipc_cuda"
step interop-ipc-pair 120 "$build/tests/interop/ipc_pair" cuda:0
step_2gpu interop-ipc-pair-2gpu 120 "$build/tests/interop/ipc_pair" cuda:0 cuda:1
RIG_HIP_LIBRARY=$build/tests/hip/libhipshim.so RIG_REQUIRE=hip step interop-hip-shim-ipc-tests 180 "$build/tests/interop/test_interop_ipc_hip"
RIG_HIP_LIBRARY=$build/tests/hip/libhipshim.so RIG_REQUIRE=hip step interop-hip-shim-ipc-pair 120 "$build/tests/interop/ipc_pair" hip:0
# NCCL between rig kernels on cuda:0: a single-rank communicator (libnccl.so.2 by dlopen from the machine's
# installation), ncclAllReduce ordered by rig_stream_wait_point/rig_stream_point, element by element over
# 200 rounds; skipped with the reason where libnccl.so.2 is absent (a FAIL under RIG_REQUIRE=cuda).
if [ -n "${INTEROP_SH_FAKE:-}" ]; then export RIG_NCCL_LIBRARY=$build/tests/interop/libfakenccl.so; fi
step interop-nccl-step 300 "$build/tests/interop/nccl_step" 200
# The pair: one rank per GPU in this process (one communicator, made in one group), NCCL's all-reduce
# between cuda:0 and cuda:1 ordered between rig kernels on each side, every element of both GPUs' results.
step_2gpu interop-nccl-step-2gpu 300 "$build/tests/interop/nccl_step" 200 cuda:0 cuda:1
step interop-torch 300 python3 scripts/gpu/interop_torch.py "$build" 1000
# 3. bench/interop: an edge with a foreign stream through rig_interop.h against the same CUDA calls by hand
#    and a host synchronisation (ratios in the log; built where the carried build has -Dbench=true).
if [ -x "$build/bench/interop/bench_interop_edge" ]; then
  step interop-edge-bench 120 "$build/bench/interop/bench_interop_edge" 1024 51
  cat "$logs/interop-edge-bench.log"
else
  printf '%-40s %-12s\n' interop-edge-bench "NOT BUILT (configure with -Dbench=true)" | tee -a "$summary"
fi
tail -12 "$logs/interop-torch.log"
echo "interop: $failures step(s) not passed, $not_run not run (need two GPUs)" | tee -a "$summary"
exit $((failures > 0))
