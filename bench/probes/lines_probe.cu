// What a line of a library's own memory costs when it is read or written between a chain's driver calls
// (issue 35: rig's own time over its calls by hand is 0.07-0.19 us an operation for about 460 instructions, and
// on the fake libcuda it grows with how much memory each driver entry walks). A measurement, not part of rig:
// on the GPU machine,
//   nvcc -O2 -o /tmp/lp bench/probes/lines_probe.cu -lcuda && /tmp/lp [ops a pass, 2048] [rounds, 51]
// Every row is bench/cuda's (b), a chain of 4 KiB copies alternating between two streams of one GPU (wait for
// the other stream's event, copy, record), plus, after each operation's record, some touching of N lines of
// the row's own memory (a line per page of a 1 MiB arena, the same lines every operation, as rig's run,
// device and stamps are): dependent reads and writes (each line's pointer read from the line before, as a
// submit follows run -> slots -> stamps), independent ones (the addresses held on the stack), plain stores
// only, stores then a locked exchange (rig's turn given back), a locked exchange alone. Each row's host time
// an operation over (b)'s, paired in each round (rows in a shuffled order every round), as the median
// difference in nanoseconds: what N such lines cost after the driver's calls on this host.
#include "probe.h"
#include "../common/rounds.h"  // quantile


#include <atomic>
#include <new>
#include <cstdint>
#include <cstring>
#include <string>

namespace {

struct alignas(64) Line {
  Line *next;
  uint64_t value;
};

constexpr int kStreams = 2, kMaxLines = 32, kBurst = 256;
constexpr size_t kArena = size_t(1) << 20, kPage = 4096;

CUstream stream[kStreams];
CUevent event[kStreams];
CUdeviceptr buf[kStreams];
Line *lines[kStreams][kMaxLines];  // each stream's lines, one a page, in a shuffled page order
std::atomic<uint32_t> *turn[kStreams];  // a locked exchange's word, a line of its own per stream

enum class Touch { none, dependent, independent, stores, stores_lock, lock };
struct Row {
  std::string name;
  Touch touch;
  int n;
  std::vector<double> host_ns;  // per round, ns an operation
};

// The row's touching after an operation of stream d: lines' values raised to i.
[[gnu::noinline]] void touch(const Row &row, int d, uint64_t i) {
  switch (row.touch) {
    case Touch::none:
      return;
    case Touch::dependent: {
      Line *p = lines[d][0];
      for (int k = 0; k < row.n; ++k) {
        p->value = p->value + i;  // a read, then a write, of the line; the next line's address read from it
        p = p->next;
      }
      return;
    }
    case Touch::independent: {
      Line *at[kMaxLines];
      std::memcpy(at, lines[d], sizeof at);  // the addresses on the stack: every read can start at once
      for (int k = 0; k < row.n; ++k) at[k]->value = at[k]->value + i;
      return;
    }
    case Touch::stores:
    case Touch::stores_lock:
      for (int k = 0; k < row.n; ++k) lines[d][k]->value = i;
      if (row.touch == Touch::stores_lock) turn[d]->exchange(0, std::memory_order_release);
      return;
    case Touch::lock:
      turn[d]->exchange(0, std::memory_order_release);
      return;
  }
}

double pass(const Row &row, int ops) {
  double ns = 0;
  for (int i = 0; i < ops;) {
    int end = std::min(ops, i + kBurst);
    auto t = clk::now();
    for (; i < end; ++i) {
      int d = i & 1;
      CU(cuStreamWaitEvent(stream[d], event[d ^ 1], 0));
      CU(cuMemcpyAsync(buf[d], buf[d ^ 1], 4096, stream[d]));
      CU(cuEventRecord(event[d], stream[d]));
      touch(row, d, uint64_t(i));
    }
    ns += since(t) * 1e9;
    CU(cuCtxSynchronize());
  }
  return ns / ops;
}

}  // namespace

int main(int argc, char **argv) {
  int ops = argc > 1 ? std::atoi(argv[1]) : 2048, rounds = argc > 2 ? std::atoi(argv[2]) : 51;
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  char name[128];
  CU(cuDeviceGetName(name, sizeof name, dev));
  for (int d = 0; d < kStreams; ++d) {
    CU(cuStreamCreate(&stream[d], CU_STREAM_NON_BLOCKING));
    CU(cuEventCreate(&event[d], CU_EVENT_DISABLE_TIMING));
    CU(cuMemAlloc(&buf[d], 4096));
    CU(cuEventRecord(event[d], stream[d]));
  }
  // Each stream's lines: one a page of its own arena, the pages in a shuffled order (no next-line or stride
  // prefetch guesses them), chained in that order for the dependent rows.
  std::mt19937 rng(11);
  for (int d = 0; d < kStreams; ++d) {
    char *arena = static_cast<char *>(std::aligned_alloc(kPage, kArena));
    std::memset(arena, 0, kArena);
    std::vector<size_t> page(kArena / kPage);
    for (size_t p = 0; p < page.size(); ++p) page[p] = p;
    std::shuffle(page.begin(), page.end(), rng);
    for (int k = 0; k < kMaxLines; ++k)
      lines[d][k] = reinterpret_cast<Line *>(arena + page[k] * kPage + (size_t(k) * 64 + 128) % kPage);
    for (int k = 0; k < kMaxLines; ++k) lines[d][k]->next = lines[d][(k + 1) % kMaxLines];
    turn[d] = new (std::aligned_alloc(64, 64)) std::atomic<uint32_t>(0);
  }
  std::vector<Row> rows = {{"(b) plain", Touch::none, 0, {}}};
  for (int n : {2, 4, 8, 16}) rows.push_back({"dependent " + std::to_string(n), Touch::dependent, n, {}});
  for (int n : {8, 16}) rows.push_back({"independent " + std::to_string(n), Touch::independent, n, {}});
  for (int n : {8, 16}) rows.push_back({"stores " + std::to_string(n), Touch::stores, n, {}});
  rows.push_back({"stores 8 then a locked exchange", Touch::stores_lock, 8, {}});
  rows.push_back({"a locked exchange", Touch::lock, 1, {}});
  rows.push_back({"(b) again", Touch::none, 0, {}});
  for (Row &r : rows) pass(r, ops);  // warm every row once
  shuffled_rounds(rows.size(), rounds, [&](size_t k) { rows[k].host_ns.push_back(pass(rows[k], ops)); });
  std::printf("lines probe on %s: 4 KiB copies alternating two streams, %d ops a pass in bursts of %d, %d rounds\n",
              name, ops, kBurst, rounds);
  std::printf("  %-34s %12s %16s %10s\n", "row", "host ns/op", "over (b), ns", "per line");
  for (const Row &r : rows) {
    std::vector<double> diff;
    for (size_t i = 0; i < r.host_ns.size(); ++i) diff.push_back(r.host_ns[i] - rows[0].host_ns[i]);
    double m = bench::quantile(diff, 0.5);
    std::printf("  %-34s %12.1f %16.1f", r.name.c_str(), bench::quantile(r.host_ns, 0.5), m);
    if (r.n) std::printf(" %10.1f", m / r.n);
    std::printf("\n");
  }
  return 0;
}
