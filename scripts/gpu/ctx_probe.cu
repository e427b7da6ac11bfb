// What the CUDA driver's context calls cost the host, the question behind rig's context guard (every hand-over
// asks cuCtxGetCurrent once, which the hand-written rows of bench/cuda and bench/interop never do), beside the
// calls of an operation that the guard sits between. A measurement, not part of rig: on the GPU machine,
// `nvcc -O2 -o /tmp/cp scripts/gpu/ctx_probe.cu -lcuda && /tmp/cp`.
// Rows, nanoseconds per call, the median of 101 batches of 1000 (the context current throughout):
//   cuCtxGetCurrent; cuCtxSetCurrent of the context already current; cuEventQuery of a done event; and, for
//   scale, cuEventRecord + cuStreamWaitEvent + a 4 KiB cuMemcpyAsync on one stream (the stream synchronized
//   after each batch).
// Then whether those stream calls need the stream's context current at all: each is made once with no
// context current and once with another context of the same GPU current, and its result printed.
#include "probe.h"

#include <algorithm>
#include <vector>

// Batches short enough that the stream calls never fill the stream's queue (which would time the GPU).
constexpr int kCalls = 1000, kBatches = 101;

template <class F>
double ns_per_call(F &&f, CUstream s) {
  std::vector<double> ns;
  for (int b = 0; b < kBatches; ++b) {
    auto t0 = clk::now();
    for (int i = 0; i < kCalls; ++i) f();
    double t = std::chrono::duration<double, std::nano>(clk::now() - t0).count() / kCalls;
    if (s) CU(cuStreamSynchronize(s));
    ns.push_back(t);
  }
  std::sort(ns.begin(), ns.end());
  return ns[kBatches / 2];
}

int main() {
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  CUstream s;
  CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUevent e;
  CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr a, b;
  CU(cuMemAlloc(&a, 4096));
  CU(cuMemAlloc(&b, 4096));
  CU(cuEventRecord(e, s));
  CU(cuStreamSynchronize(s));
  char name[128] = {};
  cuDeviceGetName(name, sizeof name, dev);
  int version = 0;
  cuDriverGetVersion(&version);
  std::printf("ctx_probe on %s, driver %d: ns per call, median of %d batches of %d\n", name, version, kBatches,
              kCalls);
  CUcontext got;
  std::printf("%-44s %8.1f\n", "cuCtxGetCurrent", ns_per_call([&] { CU(cuCtxGetCurrent(&got)); }, nullptr));
  std::printf("%-44s %8.1f\n", "cuCtxSetCurrent (already current)", ns_per_call([&] { CU(cuCtxSetCurrent(ctx)); }, nullptr));
  std::printf("%-44s %8.1f\n", "cuEventQuery (done)", ns_per_call([&] { CU(cuEventQuery(e)); }, nullptr));
  std::printf("%-44s %8.1f\n", "cuEventRecord", ns_per_call([&] { CU(cuEventRecord(e, s)); }, s));
  std::printf("%-44s %8.1f\n", "cuStreamWaitEvent", ns_per_call([&] { CU(cuStreamWaitEvent(s, e, 0)); }, s));
  std::printf("%-44s %8.1f\n", "cuMemcpyAsync 4 KiB device to device",
              ns_per_call([&] { CU(cuMemcpyAsync(b, a, 4096, s)); }, s));
  CUcontext other;
  CU(cuCtxCreate(&other, nullptr, 0, dev));  // made current by its creation
  auto name_of = [](CUresult r) {
    const char *n = "?";
    cuGetErrorName(r, &n);
    return n;
  };
  for (CUcontext current : {CUcontext{nullptr}, other}) {
    CU(cuCtxSetCurrent(current));
    const char *which = current ? "another context current" : "no context current";
    std::printf("%-24s cuEventRecord: %s, cuStreamWaitEvent: %s, cuMemcpyAsync: %s\n", which,
                name_of(cuEventRecord(e, s)), name_of(cuStreamWaitEvent(s, e, 0)), name_of(cuMemcpyAsync(b, a, 4096, s)));
  }
  CU(cuCtxSetCurrent(ctx));
  CU(cuStreamSynchronize(s));
  return 0;
}
