// What making a load's pinned staging costs, step by step (issue 12: a first load makes its 64 MiB pool in
// pieces of 16 MiB, 2-5 ms before its reads run at full depth). A measurement, not part of rig: on the GPU
// machine,
//   nvcc -O2 -o /tmp/sp bench/probes/staging_probe.cu -lcuda && /tmp/sp [MiB, 16] [rounds, 9]
// It prints the host's transparent huge page settings, then for each way of making the region (shuffled
// every round) the median [min, max] ms of: mmap + madvise, the first touch, cuMemHostRegister, and the
// whole; and how much of the region the kernel backed with huge pages. Ways:
//   memset 8t     madvise(MADV_HUGEPAGE), memset of every byte on up to 8 threads (rig's map_for_registering)
//   page 8t       the same, one byte written per 4 KiB page (the kernel zeroes the page anyway)
//   huge 8t       one byte per 2 MiB, on up to 8 threads
//   populate      MAP_POPULATE, no touch
//   no touch      registration alone pins (and so zeroes) every page
//   no madvise    memset 8t without MADV_HUGEPAGE
//   hostalloc     cuMemHostAlloc of the same size (no mmap, no registration)
//   ... flags     the row above it, registered PORTABLE | DEVICEMAP (rig's flags) instead of 0
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "probe.h"

constexpr size_t MiB = size_t(1) << 20;

static void touch(char *p, size_t n, size_t stride, bool all) {
  size_t threads = std::min<size_t>(8, std::max<size_t>(1, n / (4 * MiB)));
  size_t piece = (n / threads + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
  std::vector<std::thread> ts;
  for (size_t off = 0; off < n; off += piece)
    ts.emplace_back([=] {
      size_t len = std::min(piece, n - off);
      if (all)
        std::memset(p + off, 0, len);
      else
        for (size_t i = 0; i < len; i += stride) p[off + i] = 0;
    });
  for (auto &t : ts) t.join();
}

static long huge_kib(void *p) {  // AnonHugePages of the mapping holding p, from /proc/self/smaps
  std::ifstream f("/proc/self/smaps");
  std::string line;
  bool in = false;
  unsigned long lo, hi;
  while (std::getline(f, line)) {
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && line.find(' ') > line.find('-'))
      in = reinterpret_cast<unsigned long>(p) >= lo && reinterpret_cast<unsigned long>(p) < hi;
    else if (in && line.rfind("AnonHugePages:", 0) == 0)
      return std::atol(line.c_str() + 14);
  }
  return -1;
}

struct Way {
  std::string name;
  std::vector<double> map, first_touch, reg, whole;
  long huge = -1;
};

static void run(Way &w, size_t n) {
  auto t0 = clk::now();
  if (w.name == "hostalloc") {
    void *p = nullptr;
    CU(cuMemHostAlloc(&p, n, 0));
    double s = since(t0);
    w.map.push_back(0), w.first_touch.push_back(0), w.reg.push_back(s * 1e3), w.whole.push_back(s * 1e3);
    CU(cuMemFreeHost(p));
    return;
  }
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | (w.name == "populate" ? MAP_POPULATE : 0);
  char *p = static_cast<char *>(mmap(nullptr, n, PROT_READ | PROT_WRITE, flags, -1, 0));
  if (p == MAP_FAILED) std::exit(1);
  if (w.name != "no madvise") madvise(p, n, MADV_HUGEPAGE);
  double a = since(t0);
  if (w.name.rfind("memset 8t", 0) == 0 || w.name == "no madvise") touch(p, n, 0, true);
  if (w.name.rfind("page 8t", 0) == 0) touch(p, n, 4096, false);
  if (w.name == "huge 8t") touch(p, n, 2 * MiB, false);
  double b = since(t0);
  bool rigs = w.name.find("flags") != std::string::npos;
  CU(cuMemHostRegister(p, n, rigs ? CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP : 0));
  double c = since(t0);
  w.huge = huge_kib(p);
  w.map.push_back(a * 1e3), w.first_touch.push_back((b - a) * 1e3), w.reg.push_back((c - b) * 1e3),
      w.whole.push_back(c * 1e3);
  CU(cuMemHostUnregister(p));
  munmap(p, n);
}

static std::string stat(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  char b[96];
  std::snprintf(b, sizeof b, "%7.2f [%6.2f, %6.2f]", v[v.size() / 2], v.front(), v.back());
  return b;
}

int main(int argc, char **argv) {
  size_t n = (argc > 1 ? std::atol(argv[1]) : 16) * MiB;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  for (const char *f : {"/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/mm/transparent_hugepage/defrag"}) {
    std::ifstream in(f);
    std::string s;
    std::getline(in, s);
    std::printf("%s: %s\n", f, s.c_str());
  }
  CU(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  std::vector<Way> ways = {{"memset 8t"}, {"page 8t"}, {"huge 8t"}, {"populate"}, {"no touch"}, {"no madvise"}, {"hostalloc"},
                          {"memset 8t flags"}, {"page 8t flags"}};
  for (Way &w : ways) run(w, n);  // warm-up, not counted
  for (Way &w : ways) w.map.clear(), w.first_touch.clear(), w.reg.clear(), w.whole.clear();
  shuffled_rounds(ways.size(), rounds, [&](size_t i) { run(ways[i], n); });
  std::printf("%zu MiB, %d rounds, ms median [min, max]; huge: AnonHugePages of the region\n", n / MiB, rounds);
  std::printf("%-15s %-26s %-26s %-26s %-26s %s\n", "way", "mmap+madvise", "first touch", "register", "whole", "huge KiB");
  for (Way &w : ways)
    std::printf("%-15s %-26s %-26s %-26s %-26s %ld\n", w.name.c_str(), stat(w.map).c_str(), stat(w.first_touch).c_str(),
                stat(w.reg).c_str(), stat(w.whole).c_str(), w.huge);
  return 0;
}
