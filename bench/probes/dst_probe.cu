// What host-to-device copies pay for device memory they are the first to write (issue 12: a later load
// in a process, into buffers made after the previous load's were freed, ran 0.90-0.93 of the link; the
// link row copies into one buffer written before). A measurement, not part of rig: on the GPU machine,
//   nvcc -O2 -o /tmp/dp bench/probes/dst_probe.cu && /tmp/dp [GiB] [pieces] [pooled]
// Every row copies GiB GiB from a 64 MiB pinned ring in 4 MiB copies on one stream into device memory of
// a different history: pieces (default 1) allocations of GiB/pieces each, as a loader's tensors are;
// pooled 1: from the device's default stream-ordered pool with its release threshold at the maximum.
#include "probe.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>

#include <vector>

constexpr size_t MiB = size_t(1) << 20, ring = 64 * MiB, chunk = 4 * MiB;
static size_t total, pieces;
static char *host;
static cudaStream_t stream;

using Buffers = std::vector<char *>;

static bool pooled;  // stream-ordered allocations from the device's default pool, kept (release threshold max)

static Buffers alloc() {
  Buffers b(pieces);
  for (auto &p : b)
    if (pooled)
      CK(cudaMallocAsync(reinterpret_cast<void **>(&p), total / pieces, stream));
    else
      CK(cudaMalloc(&p, total / pieces));
  return b;
}
static void release(Buffers &b) {
  for (char *p : b)
    if (pooled)
      CK(cudaFreeAsync(p, stream));
    else
      CK(cudaFree(p));
  b.clear();
}

static void row(const char *what, const Buffers &b) {
  size_t each = total / pieces;
  auto t = clk::now();
  for (size_t at = 0; at < total; at += chunk)
    CK(cudaMemcpyAsync(b[at / each] + at % each, host + at % ring, chunk, cudaMemcpyHostToDevice, stream));
  CK(cudaStreamSynchronize(stream));
  double s = since(t);
  std::printf("%-64s %7.2f GB/s\n", what, total / s / 1e9);
  std::fflush(stdout);
}

int main(int argc, char **argv) {
  total = (argc > 1 ? size_t(std::atoi(argv[1])) : 8) << 30;
  pieces = argc > 2 ? size_t(std::atoi(argv[2])) : 1;
  pooled = argc > 3 && std::atoi(argv[3]) != 0;
  std::printf("%zu GiB in %zu allocation(s)%s, 4 MiB copies from a 64 MiB pinned ring\n", total >> 30, pieces,
              pooled ? " from the default pool kept whole (cudaMallocAsync)" : " (cudaMalloc)");
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (pooled) {
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t keep = ~uint64_t{0};
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  CK(cudaHostAlloc(reinterpret_cast<void **>(&host), ring, cudaHostAllocDefault));
  std::memset(host, 1, ring);
  if (pooled && argc > 4) {  // reserve: the pool grown by one allocation of the whole, freed at once
    size_t free0, free1, free2, all;
    CK(cudaMemGetInfo(&free0, &all));
    auto t = clk::now();
    char *whole;
    CK(cudaMallocAsync(reinterpret_cast<void **>(&whole), total, stream));
    CK(cudaFreeAsync(whole, stream));
    CK(cudaStreamSynchronize(stream));
    double reserve_ms = since(t) * 1e3;
    CK(cudaMemGetInfo(&free1, &all));
    t = clk::now();
    Buffers r = alloc();
    CK(cudaStreamSynchronize(stream));
    double alloc_ms = since(t) * 1e3;
    CK(cudaMemGetInfo(&free2, &all));
    std::printf("reserve %.2f ms (device memory used +%zu MiB), %zu allocations after it %.2f ms (+%zu MiB more)\n",
                reserve_ms, (free0 - free1) >> 20, pieces, alloc_ms, (free1 - free2) >> 20);
    row("R: allocated from the reserve", r);
    release(r);
    t = clk::now();
    Buffers r2 = alloc();
    CK(cudaStreamSynchronize(stream));
    std::printf("%zu allocations again: %.2f ms\n", pieces, since(t) * 1e3);
    row("R2: allocated again after R was freed", r2);
    return 0;
  }
  auto t0 = clk::now();
  Buffers a = alloc();
  if (pooled) CK(cudaStreamSynchronize(stream));
  std::printf("%zu first allocations: %.2f ms\n", pieces, since(t0) * 1e3);
  row("A: the process's first allocation, never written", a);
  row("A again (written once)", a);
  Buffers b = alloc();
  row("B: allocated beside A, never written", b);
  release(a);
  Buffers c = alloc();
  row("C: allocated right after A was freed", c);
  row("C again", c);
  release(b);
  usleep(2000000);
  Buffers d = alloc();
  row("D: allocated 2 s after B was freed", d);
  release(c);
  Buffers e = alloc();
  CK(cudaMemsetAsync(e[0], 0, total / pieces, stream));
  for (size_t i = 1; i < pieces; ++i) CK(cudaMemsetAsync(e[i], 0, total / pieces, stream));
  CK(cudaStreamSynchronize(stream));
  row("E: allocated after C was freed, then memset", e);
  release(d);
  release(e);
  Buffers f = alloc();
  row("F: allocated after D and E were freed", f);
  row("F again", f);
  return 0;
}
