// Whether the gap between one stream's back-to-back host-to-device copies, the later load's bound (issue 12:
// 4 MiB copies move 0.966-0.982 of the link on one stream, 16 MiB 0.995), is hidden by spreading the same
// copies over several streams, which the GPU may serve with more than one copy engine. A measurement, not
// part of rig: on the GPU machine, `nvcc -O2 -o /tmp/sp scripts/gpu/streams_probe.cu && /tmp/sp [rounds]`.
// Every row moves 8 GiB from a 64 MiB pinned ring (the staged path's pool) into one 8 GiB device buffer:
//   link            one stream, 256 MiB copies (the bench's link row)
//   1 stream, N MiB one stream of N MiB copies
//   S streams, 4 MiB copies dealt round robin over S streams
// Rounds interleave the rows; each row's best and median GB/s and its fraction of the link's median.
#include "probe.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr size_t MiB = size_t(1) << 20, total = 8192 * MiB, ring = 64 * MiB;

struct Row {
  const char *name;
  size_t chunk;
  int streams;
  std::vector<double> gbs;
};

static double pass(const Row &row, std::vector<cudaStream_t> &streams, char *host, char *dst) {
  size_t chunk = row.chunk, src_chunk = std::min(chunk, ring);
  auto t0 = clk::now();
  for (size_t off = 0, i = 0; off < total; off += chunk, ++i) {
    char *src = host + (i * src_chunk) % ring;  // a 256 MiB copy reads the ring's start 4 times over: same link
    if (chunk > ring) src = host;
    CK(cudaMemcpyAsync(dst + off, src, chunk, cudaMemcpyHostToDevice, streams[i % row.streams]));
  }
  for (int s = 0; s < row.streams; ++s) CK(cudaStreamSynchronize(streams[s]));
  return total / since(t0) / 1e9;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  char *host, *dst;
  // The link row's 256 MiB copies need a 256 MiB source; the ring rows use its first 64 MiB.
  CK(cudaHostAlloc(&host, 256 * MiB, cudaHostAllocDefault));
  std::memset(host, 1, 256 * MiB);
  CK(cudaMalloc(&dst, total));
  std::vector<cudaStream_t> streams(4);
  for (auto &s : streams) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<Row> rows = {{"link: 1 stream, 256 MiB", 256 * MiB, 1, {}}, {"1 stream, 4 MiB", 4 * MiB, 1, {}},
                           {"1 stream, 16 MiB", 16 * MiB, 1, {}},         {"2 streams, 4 MiB", 4 * MiB, 2, {}},
                           {"3 streams, 4 MiB", 4 * MiB, 3, {}},          {"4 streams, 4 MiB", 4 * MiB, 4, {}},
                           {"2 streams, 2 MiB", 2 * MiB, 2, {}}};
  int ce = 0;
  CK(cudaDeviceGetAttribute(&ce, cudaDevAttrAsyncEngineCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("streams_probe on %s (async engines %d): 8 GiB from a 64 MiB pinned ring, %d rounds\n", prop.name, ce,
              rounds);
  for (auto &r : rows) pass(r, streams, host, dst);  // warm up
  for (int k = 0; k < rounds; ++k)
    for (size_t j = 0; j < rows.size(); ++j) {
      Row &r = rows[(j + k) % rows.size()];  // rotated: no row always first
      r.gbs.push_back(pass(r, streams, host, dst));
    }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double link = median(rows[0].gbs);
  std::printf("%-28s %10s %10s %10s\n", "row", "best GB/s", "med GB/s", "of link");
  for (auto &r : rows)
    std::printf("%-28s %10.2f %10.2f %10.3f\n", r.name, *std::max_element(r.gbs.begin(), r.gbs.end()),
                median(r.gbs), median(r.gbs) / link);
  return 0;
}
