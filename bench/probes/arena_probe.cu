// What making a load's device memory costs by the size of its allocations (issue 12: a first load makes one
// device allocation per tensor, 64 of 64 MiB for the 4 GiB bench file, 5.5-8.0 ms of its copier's time).
// A measurement, not part of rig: on the GPU machine,
//   nvcc -O2 -o /tmp/ap bench/probes/arena_probe.cu -lcuda && /tmp/ap [GiB]
// Each round makes GiB of device memory (4 by default) in one of several shapes, in a shuffled order, then
// frees it; it prints the median and range over rounds of the making and the freeing, in ms:
//   64 MiB x N     one cuMemAlloc per 64 MiB tensor, as rig's loader does today
//   256 MiB, 1 GiB, whole: fewer, larger cuMemAlloc calls
//   vmm whole      one cuMemCreate of the whole, reserved, mapped and made accessible
//   async fresh    cudaMallocAsync of 64 MiB tensors from the device's pool trimmed to nothing first
#include "probe.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

constexpr size_t MiB = size_t(1) << 20;

struct Shape {
  std::string name;
  size_t piece;  // 0: the vmm row
  bool async;
  std::vector<double> make_ms, free_ms;
};

static CUdevice dev;
static cudaStream_t stream;

static void run(Shape &s, size_t total) {
  if (!s.piece) {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran = 0;
    CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    size_t len = (total + gran - 1) / gran * gran;
    auto t = clk::now();
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CU(cuMemAddressReserve(&va, len, 0, 0, 0));
    CU(cuMemCreate(&h, len, &prop, 0));
    CU(cuMemMap(va, len, 0, h, 0));
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU(cuMemSetAccess(va, len, &access, 1));
    s.make_ms.push_back(since(t) * 1e3);
    t = clk::now();
    CU(cuMemUnmap(va, len));
    CU(cuMemRelease(h));
    CU(cuMemAddressFree(va, len));
    s.free_ms.push_back(since(t) * 1e3);
    return;
  }
  std::vector<void *> made;
  if (s.async) {
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CK(cudaMemPoolTrimTo(pool, 0));
  }
  auto t = clk::now();
  for (size_t done = 0; done < total; done += s.piece) {
    void *p = nullptr;
    if (s.async)
      CK(cudaMallocAsync(&p, s.piece, stream));
    else
      CK(cudaMalloc(&p, s.piece));
    made.push_back(p);
  }
  if (s.async) CK(cudaStreamSynchronize(stream));
  s.make_ms.push_back(since(t) * 1e3);
  t = clk::now();
  for (void *p : made) {
    if (s.async)
      CK(cudaFreeAsync(p, stream));
    else
      CK(cudaFree(p));
  }
  CK(cudaStreamSynchronize(stream));
  s.free_ms.push_back(since(t) * 1e3);
}

static void report(const char *what, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("  %s %7.2f [%6.2f, %6.2f]", what, v[v.size() / 2], v.front(), v.back());
}

int main(int argc, char **argv) {
  size_t total = size_t(argc > 1 ? std::atoi(argv[1]) : 4) << 30;
  int rounds = 9;
  CK(cudaSetDevice(0));
  CU(cuCtxGetDevice(&dev));
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void *warm;
  CK(cudaMalloc(&warm, MiB));  // the context's first allocation is not any shape's
  std::vector<Shape> shapes = {{"64 MiB x N", 64 * MiB, false, {}, {}},
                               {"256 MiB x N", 256 * MiB, false, {}, {}},
                               {"1 GiB x N", 1024 * MiB, false, {}, {}},
                               {"whole", total, false, {}, {}},
                               {"vmm whole", 0, false, {}, {}},
                               {"async fresh 64 MiB", 64 * MiB, true, {}, {}}};
  shuffled_rounds(shapes.size(), rounds, [&](size_t i) { run(shapes[i], total); });
  std::printf("arena_probe: %zu MiB of device memory, %d rounds, median [min, max] ms\n", total / MiB, rounds);
  for (Shape &s : shapes) {
    std::printf("%-20s", s.name.c_str());
    report("make", s.make_ms);
    report("free", s.free_ms);
    std::printf("\n");
  }
  return 0;
}
