// The interop edge benchmark (issue 16): what an ordering edge between rig's work and a foreign stream (a
// PyTorch or NCCL stream) costs through rig_interop.h, against the same CUDA calls by hand and against a
// host synchronisation. Each operation of a pass is a rig kernel (rig_add_u32 on 1024 uint32) followed by a
// 4 KiB copy on a foreign stream that reads what the kernel wrote, the next kernel following the copy:
//   (hand) two raw streams: launch; record; the foreign stream waits for the record; copy; record; rig's
//          stream waits for that record: the calls a program makes with streams and events;
//   (rig)  rig_submit, then rig_stream_wait_point on the foreign stream (the exported edge), the copy, then
//          rig_stream_point + rig_buffer_stamp (the imported edge): no host wait;
//   (sync) rig_submit, rig_wait_point on the host, the copy, cuStreamSynchronize: the edge without interop;
//   (ring) the hand's calls with the kernel's event taken in turn from 1024, as rig's timeline takes one
//          per value: what many events cost the driver against one reused.
// Wall time per operation covers enqueueing a pass and waiting for its end. Every figure is a ratio against
// (hand) in the same round, the median over rounds with its 95% CI and quartiles (bench/common/rounds.h, as
// bench/cuda and bench/vulkan), with (hand) against itself (a second measurement in each round) as the noise. Needs a GPU: exits 77 with the reason otherwise.
#include <rig.h>
#include <rig_interop.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "drivers/cuda/api.h"
#include "drivers/stream/gpu.h"
#include "common/rounds.h"
#include "kernels_ptx.h"

namespace {

using Clock = std::chrono::steady_clock;
using rig::cuda::Api;
namespace cu = rig::cu;

constexpr uint32_t kN = 1024;  // elements of the kernel; the copy moves all 4 KiB
int ops = 1024;
int rounds = 51;

void check(rig_status s, const char *what) {
  if (s != RIG_OK) {
    std::fprintf(stderr, "%s: %s: %s\n", what, rig_status_name(s), rig_last_error());
    std::exit(1);
  }
}

void check_cu(cu::Result r, const char *what) {
  if (r != cu::SUCCESS) {
    std::fprintf(stderr, "%s: %s\n", what, rig::cuda::error_name(r));
    std::exit(1);
  }
}

struct Hand {
  const Api &api;
  const rig::stream::Gpu *gpu = nullptr;
  cu::Stream mine = nullptr, foreign = nullptr;
  cu::Event copied = nullptr;
  // The kernel's event, taken in turn from a ring of `ring` events as rig's timeline takes its marks' (one
  // per value, drivers/stream/timeline.h): the driver's cost of many events against one reused.
  std::vector<cu::Event> ring;
  size_t next = 0;
  cu::Module module = nullptr;
  cu::Function add = nullptr;
  cu::DevicePtr x = 0, y = 0;

  explicit Hand(const Api &a, size_t ring_size = 1) : api(a) {
    check(rig::stream::gpu_at(api.family, 0, &gpu), "gpu");
    rig::stream::Current c(*gpu);
    check_cu(api.cuStreamCreate(&mine, cu::STREAM_NON_BLOCKING), "stream");
    check_cu(api.cuStreamCreate(&foreign, cu::STREAM_NON_BLOCKING), "stream");
    check_cu(api.cuEventCreate(&copied, cu::EVENT_DISABLE_TIMING), "event");
    ring.resize(ring_size);
    for (cu::Event &e : ring) check_cu(api.cuEventCreate(&e, cu::EVENT_DISABLE_TIMING), "event");
    check_cu(api.cuModuleLoadDataEx(&module, kernels_ptx, 0, nullptr, nullptr), "module");
    check_cu(api.cuModuleGetFunction(&add, module, "rig_add_u32"), "function");
    check_cu(api.cuMemAlloc(&x, kN * 4), "x");
    check_cu(api.cuMemAlloc(&y, kN * 4), "y");
  }
  void op() {
    struct { uint32_t n, k; } s{kN, 1};
    void *params[] = {&x, &x, &s};
    check_cu(api.cuLaunchKernel(add, kN / 256, 1, 1, 256, 1, 1, 0, mine, params, nullptr), "launch");
    cu::Event done = ring[next++ % ring.size()];
    check_cu(api.cuEventRecord(done, mine), "record");
    check_cu(api.cuStreamWaitEvent(foreign, done, 0), "wait");
    check_cu(api.cuMemcpyAsync(y, x, kN * 4, foreign), "copy");
    check_cu(api.cuEventRecord(copied, foreign), "record");
    check_cu(api.cuStreamWaitEvent(mine, copied, 0), "wait");
  }
  void finish() {
    check_cu(api.cuStreamSynchronize(foreign), "sync");
    check_cu(api.cuStreamSynchronize(mine), "sync");
  }
};

struct ThroughRig {
  const Api &api;
  Hand &hand;  // its foreign stream and y
  rig_device dev = nullptr;
  rig_module module = nullptr;
  rig_buffer x = nullptr;
  rig_run run = nullptr;
  rig_point last = 0;

  ThroughRig(const Api &a, Hand &h) : api(a), hand(h) {
    check(rig_device_open("cuda:0", &dev), "open");
    check(rig_module_load(dev, RIG_MODULE_PTX, kernels_ptx, sizeof kernels_ptx, &module), "module");
    check(rig_buffer_create(dev, kN * 4, RIG_MEMORY_DEVICE, &x), "x");
    uint32_t slots[2] = {0, 0};
    rig_part p{};
    p.size = sizeof p;
    p.kind = RIG_PART_LAUNCH;
    p.module = module;
    p.function = "rig_add_u32";
    p.grid[0] = kN / 256, p.grid[1] = p.grid[2] = 1;
    p.block[0] = 256, p.block[1] = p.block[2] = 1;
    p.slots = slots;
    p.slot_count = 2;
    rig_access access = RIG_ACCESS_READ_WRITE;
    rig_submission sub;
    check(rig_submission_make(dev, &p, 1, &access, 1, &sub), "submission");
    check(rig_run_take(sub, &run), "run");
    rig_submission_release(sub);
    check(rig_run_set_buffer(run, 0, x), "slot");
    uint32_t s[2] = {kN, 1};
    check(rig_run_set_scalars(run, s, sizeof s), "scalars");
    check(rig_buffer_device_address(x, &x_address), "address");
  }
  // Taken once, as a program takes a tensor's pointer: valid until x is released (rig_interop.h).
  uint64_t x_address = 0;
  void op_interop() {
    rig_point written;
    check(rig_submit(run, nullptr, 0, &written), "submit");
    check(rig_stream_wait_point(dev, hand.foreign, written), "stream_wait_point");  // exported edge
    check_cu(api.cuMemcpyAsync(hand.y, x_address, kN * 4, hand.foreign), "copy");
    rig_point copied;
    check(rig_stream_point(dev, hand.foreign, &copied), "stream_point");  // imported edge
    check(rig_buffer_stamp(x, copied, RIG_ACCESS_READ), "stamp");
    last = copied;
  }
  void op_sync() {
    rig_point written;
    check(rig_submit(run, nullptr, 0, &written), "submit");
    check(rig_wait_point(written, UINT64_MAX), "wait");
    check_cu(api.cuMemcpyAsync(hand.y, x_address, kN * 4, hand.foreign), "copy");
    check_cu(api.cuStreamSynchronize(hand.foreign), "sync");
  }
  void finish() {
    uint64_t submitted = 0;
    check(rig_device_submitted(dev, &submitted), "submitted");
    check(rig_device_wait(dev, submitted, UINT64_MAX), "wait");
  }
};

}  // namespace

int main(int argc, char **argv) {
  if (argc > 1) ops = std::atoi(argv[1]);
  if (argc > 2) rounds = std::atoi(argv[2]);
  if (ops < 1 || rounds < 1) {
    std::fprintf(stderr, "usage: %s [ops a pass >= 1] [rounds >= 1]\n", argv[0]);
    return 2;
  }
  const Api *api = rig::cuda::api();
  int count = 0;
  if (!api || api->cuDeviceGetCount(&count) != cu::SUCCESS || count == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", api ? "no GPU" : rig_last_error());
    return 77;
  }
  char name[256] = {};
  api->cuDeviceGetName(name, 255, 0);
  Hand hand(*api);
  Hand hand_ring(*api, 1024);  // as many events as rig's timeline cycles through (Timeline::kRing)
  ThroughRig through(*api, hand);
  std::printf("rig interop edge benchmark on %s, driver %d: %d ops a pass, %d rounds\n", name, api->driver_version,
              ops, rounds);
  // Every row runs with the GPU's context current on the thread, as a PyTorch or NCCL program keeps it (and as
  // the hand row needs it): without it rig's context guard and the copy's switched the context in and out
  // around each of the edge's four calls, a cost of the bench's thread, not of the edge. Made current once a
  // pass, in every row alike (the rig rows' copies once made it current again around each copy: one
  // cuCtxGetCurrent an operation that the hand row did not pay). Both hands and rig are on GPU 0.
  using Row = bench::Row<double>;  // a round's figure: wall microseconds an operation
  std::vector<Row> rows = {
      {"hand", "hand", [&](int) { hand.op(); }, [&] { hand.finish(); }},
      {"hand2", "hand (again: the noise)", [&](int) { hand.op(); }, [&] { hand.finish(); }},
      {"rig", "rig (stream wait point + stream point)", [&](int) { through.op_interop(); },
       [&] { through.finish(); hand.finish(); }},
      {"sync", "host synchronisation", [&](int) { through.op_sync(); }, [&] { through.finish(); }},
      {"ring", "hand, a ring of 1024 kernel events", [&](int) { hand_ring.op(); }, [&] { hand_ring.finish(); }},
  };
  auto measure = [&](Row &r) {
    rig::stream::Current c(*hand.gpu);
    r.rounds.push_back(bench::pass(ops, 0, r.op, r.finish).wall_us);
  };
  for (Row &r : rows) measure(r);  // warm up (module loads, first launches)
  for (Row &r : rows) r.rounds.clear();
  bench::run_rounds(rows, rounds, measure);
  std::printf("%-42s %12s   %s\n", "row", "us/op (med)", "ratio to hand: median [95% CI] (quartiles)");
  for (const Row &r : rows) {
    bench::Spread q = *bench::ratio(rows, r.key, "hand", [](double a, double b) { return a / b; });
    std::printf("%-42s %12.2f %12.3f [%.3f, %.3f] (%.3f-%.3f)\n", r.name, bench::quantile(r.rounds, 0.5), q.median,
                q.lo, q.hi, q.q1, q.q3);
  }
  rig_run_release(through.run);
  rig_buffer_release(through.x);
  rig_module_release(through.module);
  rig_device_release(through.dev);
  return 0;
}
