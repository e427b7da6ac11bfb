// What a device allocation does to copies in flight, the question behind the loader's later loads
// (issue 12): a load makes one device buffer per tensor while its copies run. Built and run on the GPU
// machine by scripts/gpu/alloc_probe.sh (nvcc; a measurement, not part of rig).
// Rows, one stream of 4 MiB pinned host-to-device copies (the staged path's chunk), 64 MiB tensors:
//   link           the copies alone
//   cuMemAlloc     the same copies with a cudaMalloc of 64 MiB every 16 copies (as a load makes a tensor),
//                  and how often the stream had drained when the allocation returned (it waited for it)
//   async, pool    the same with cudaMallocAsync from a pool that keeps freed memory (a later load)
//   async, fresh   the same on a pool emptied first (what a first load in a process would pay)
#include "probe.h"
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>

constexpr size_t MiB = size_t(1) << 20, chunk = 4 * MiB, tensor = 64 * MiB;
constexpr int tensors = 128, per_tensor = int(tensor / chunk);

enum Mode { none, sync_alloc, async_alloc };

// One pass: `tensors` tensors' worth of chunk copies into one destination ring, allocating a tensor of
// `tensor` bytes before each tensor's copies (mode). Answers GB/s of the copies; *drained counts the
// allocations after which the stream was already idle; *alloc_s sums their host time.
static double pass(Mode mode, cudaStream_t s, char *host, char *dst, size_t ring, int *drained, double *alloc_s,
                   std::vector<void *> &made) {
  *drained = 0;
  *alloc_s = 0;
  CK(cudaStreamSynchronize(s));
  auto t = clk::now();
  size_t off = 0;
  for (int k = 0; k < tensors; ++k) {
    if (mode != none) {
      void *p = nullptr;
      auto a = clk::now();
      if (mode == sync_alloc) CK(cudaMalloc(&p, tensor));
      else CK(cudaMallocAsync(&p, tensor, s));
      *alloc_s += since(a);
      if (cudaStreamQuery(s) == cudaSuccess) ++*drained;
      made.push_back(p);
    }
    for (int c = 0; c < per_tensor; ++c) {
      CK(cudaMemcpyAsync(dst + off, host + off % (256 * MiB), chunk, cudaMemcpyHostToDevice, s));
      off = (off + chunk) % ring;
    }
  }
  CK(cudaStreamSynchronize(s));
  return double(tensors) * tensor / since(t) / 1e9;
}

static void free_all(std::vector<void *> &made, bool async, cudaStream_t s) {
  for (void *p : made) {
    if (async) CK(cudaFreeAsync(p, s));
    else CK(cudaFree(p));
  }
  made.clear();
  CK(cudaStreamSynchronize(s));
}

int main() {
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  char *host = nullptr, *dst = nullptr;
  CK(cudaHostAlloc(&host, 256 * MiB, cudaHostAllocPortable));
  for (size_t i = 0; i < 256 * MiB; i += 4096) host[i] = char(i);
  size_t ring = 1024 * MiB;
  CK(cudaMalloc(&dst, ring));
  cudaMemPool_t pool;
  CK(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t keep = UINT64_MAX;
  CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  std::vector<void *> made;
  int drained;
  double alloc_s;
  std::printf("alloc_probe: %d tensors of %zu MiB, copies of %zu MiB (8 GiB a pass), best of 3\n", tensors,
              tensor / MiB, chunk / MiB);
  for (int round = 0; round < 3; ++round) {
    double g = pass(none, s, host, dst, ring, &drained, &alloc_s, made);
    std::printf("  link                          %6.2f GB/s\n", g);
    g = pass(sync_alloc, s, host, dst, ring, &drained, &alloc_s, made);
    std::printf("  cudaMalloc per tensor         %6.2f GB/s  alloc %.1f ms summed, stream drained after %d of %d\n", g,
                alloc_s * 1e3, drained, tensors);
    free_all(made, false, s);
    // A pool trimmed to nothing: every cudaMallocAsync maps new memory, as in a process's first load.
    CK(cudaMemPoolTrimTo(pool, 0));
    g = pass(async_alloc, s, host, dst, ring, &drained, &alloc_s, made);
    std::printf("  cudaMallocAsync, fresh pool   %6.2f GB/s  alloc %.1f ms summed, stream drained after %d of %d\n", g,
                alloc_s * 1e3, drained, tensors);
    free_all(made, true, s);
    g = pass(async_alloc, s, host, dst, ring, &drained, &alloc_s, made);
    std::printf("  cudaMallocAsync, kept pool    %6.2f GB/s  alloc %.1f ms summed, stream drained after %d of %d\n", g,
                alloc_s * 1e3, drained, tensors);
    free_all(made, true, s);
  }
  return 0;
}
