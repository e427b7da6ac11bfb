// The chain benchmark of issue 4: a chain of dependent operations (4 KiB copies, or tiny kernels) that
// alternates between two streams (two rig devices over one GPU, and over two GPUs where there are two),
// each operation reading what the previous one wrote, done
//   (a) through rig (submits; rig orders them by the memory they use),
//   (b) by hand with streams, events and cuStreamWaitEvent (the GPU's context current, as after
//       cudaSetDevice; across two GPUs a switch before each operation),
//   (br) as (b), through the CUDA runtime (cudaStreamWaitEvent and friends, libcudart where the machine
//       has it): the program the issue names,
//   (c) with a synchronize after each operation,
//   (d) by hand with the very calls rig's CUDA driver makes with its default timeline (a ring of events:
//       wait for the other stream's last event, enqueue, record the next event of the ring),
//   (e) by hand with the calls of its memory-operation timeline (RIG_CUDA_TIMELINE=memops),
// and (a1) through rig on one device (no cross-device edge), to price an edge, and (am) through rig with
// the memory-operation timeline. Batches (issue 35): (a16) through rig, kBatch operations a submit
// (rig_submit_many), the device alternating every batch; (b16) the same operations with (b)'s calls, an
// operation at a time. Copies there are kBatch independent ones a batch (kBatch source and destination
// buffers, each batch copying back what the one before copied: CUDA's batch of copies takes them at once);
// kernels the same kernel in place.
// Wall time per operation covers enqueueing all and waiting for the last; host time covers enqueueing.
// Every figure is a ratio against a row of the same run: the median over rounds of the two rows' ratio in
// each round (every round measures every row, in a shuffled order: bench/common/rounds.h), with its
// quartiles, beside the ratio of (b) measured twice, which is the noise. Needs a GPU: exits 77 with the
// reason otherwise. Through the counting interposer with its timing on (RIG_CUDA_LIBRARY=libcountcuda.so,
// RIGCOUNT_TIME=1; tests/doubles/count_cuda) each row also gets a pass that splits its host time into the
// time inside the driver's entries and the rest (the row's own code: rig, or the loop by hand), and counts
// its driver calls an operation.
#include <dlfcn.h>
#include <rig.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/add_part.h"
#include "common/rounds.h"
#include "drivers/cuda/api.h"
#include "drivers/cuda/context.h"
#include "kernels_ptx.h"
#include "runtime_chain.h"

namespace {

using rig::cuda::Api;
namespace cu = rig::cu;

struct Result {
  double wall_us = 0;  // per operation
  double host_us = 0;  // per operation, enqueueing only
  double tail_us = 0;  // the last finish() of the pass, in all: how far the GPU was behind, plus the wait's own
  double enqueue_us = 0;  // a row's continuous pass: its enqueueing per operation (wall = enqueue + tail / ops)
  // Under the timing interposer (timed_pass), per operation: host time, the part inside the driver, calls.
  double timed_us = 0, driver_us = 0, calls = 0;
};

// The timing interposer's counters (tests/doubles/count_cuda), or null where the CUDA library rig loaded is
// not it or its timing is off.
using CountQuery = long long (*)(const char *);
CountQuery timing_query() {
  const char *lib = std::getenv("RIG_CUDA_LIBRARY"), *on = std::getenv("RIGCOUNT_TIME");
  if (!lib || !on || std::strcmp(on, "1") != 0) return nullptr;
  void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  return h ? reinterpret_cast<CountQuery>(dlsym(h, "rigcount_query")) : nullptr;
}
CountQuery timing = nullptr;
double tsc_per_us = 0;  // the time-stamp counter's rate, measured against the steady clock at start

void calibrate_tsc() {
  auto t0 = std::chrono::steady_clock::now();
  unsigned long long c0 = __rdtsc();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(100)) {
  }
  unsigned long long c1 = __rdtsc();
  tsc_per_us = double(c1 - c0) / std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// Short passes, many rounds: a pass of 2048 operations takes about 10 ms, so the rows of one round are
// measured within a fraction of a second of one another and drift cancels in their ratio.
int ops = 2048;
int repeats = 101;  // rounds
size_t aw_window = 32, ds_events = 16;  // (aw)'s window and (ds)'s events (BENCH_AW_WINDOW, BENCH_DS_EVENTS)

void check(rig_status s, const char *what) {
  if (s != RIG_OK) {
    std::fprintf(stderr, "%s: %s: %s\n", what, rig_status_name(s), rig_last_error());
    std::exit(1);
  }
}

void check_cu(const Api &, cu::Result r, const char *what) {
  if (r != cu::SUCCESS) {
    std::fprintf(stderr, "%s: %s\n", what, rig::cuda::error_name(r));
    std::exit(1);
  }
}

constexpr int kBurst = 256;
constexpr int kBatch = 16;  // operations a submit in the batch rows; kBurst is a multiple

// A row of the table (bench/common/rounds.h); each round measures wall time from one continuous pass and
// host time from one pass in bursts.
using Row = bench::Row<Result>;
void measure(Row &row) {
  bench::Pass whole = bench::pass(ops, 0, row.op, row.finish);
  Result r;
  r.wall_us = whole.wall_us;
  r.tail_us = whole.tail_us;
  r.enqueue_us = whole.host_us;
  r.host_us = bench::pass(ops, kBurst, row.op, row.finish).host_us;
  if (timing) {
    // As the burst pass, the counters read around each burst's enqueueing only (a finish is not a row's cost).
    unsigned long long tsc = 0;
    long long cycles = 0, calls = 0;
    for (int i = 0; i < ops;) {
      int end = std::min(ops, i + kBurst);
      long long y0 = timing("cycles:all"), n0 = timing("calls:all");
      unsigned long long t0 = __rdtsc();
      for (; i < end; ++i) row.op(i);
      unsigned long long t1 = __rdtsc();
      cycles += timing("cycles:all") - y0;
      calls += timing("calls:all") - n0;
      tsc += t1 - t0;
      row.finish();
    }
    r.timed_us = tsc / tsc_per_us / ops;
    r.driver_us = cycles / tsc_per_us / ops;
    r.calls = double(calls) / ops;
  }
  row.rounds.push_back(r);
}

// ---- rig rows --------------------------------------------------------------------------------------------

struct RigChain {
  rig_device dev[2];
  rig_buffer x[2], y[2];  // x[i], y[i]: the same two allocations as seen by device i
  rig_module module[2];
  rig_run copy_xy[2], copy_yx[2], step[2];
  rig_submission subs[4] = {};
  // The batch rows: kBatch pairs of buffers (p[k] on the first device, seen by each as pd[d][k]); a batch
  // copies every p[k] into q[k], the next every q[k] back (forth[d], back[d]), or launches kBatch times.
  rig_buffer p[kBatch], q[kBatch], pd[2][kBatch], qd[2][kBatch];
  rig_run forth[2][kBatch], back[2][kBatch], steps[2][kBatch];

  RigChain(const char *name0, const char *name1) {
    check(rig_device_open(name0, &dev[0]), name0);
    check(rig_device_open(name1, &dev[1]), name1);
    check(rig_buffer_create(dev[0], 4096, RIG_MEMORY_DEVICE, &x[0]), "x");
    check(rig_buffer_create(dev[0], 4096, RIG_MEMORY_DEVICE, &y[0]), "y");
    check(rig_buffer_borrow(dev[1], x[0], &x[1]), "borrow x");
    check(rig_buffer_borrow(dev[1], y[0], &y[1]), "borrow y");
    int k = 0;
    for (int d = 0; d < 2; ++d) {
      check(rig_module_load(dev[d], RIG_MODULE_PTX, kernels_ptx, std::strlen(kernels_ptx), &module[d]), "module");
      rig_part copy{};
      copy.size = sizeof copy;
      copy.kind = RIG_PART_COPY;
      copy.src_slot = 0;
      copy.dst_slot = 1;
      copy.length = RIG_WHOLE;
      rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
      check(rig_submission_make(dev[d], &copy, 1, access, 2, &subs[k]), "copy submission");
      check(rig_run_take(subs[k], &copy_xy[d]), "take");
      check(rig_run_set_buffer(copy_xy[d], 0, x[d]), "set");
      check(rig_run_set_buffer(copy_xy[d], 1, y[d]), "set");
      check(rig_run_take(subs[k++], &copy_yx[d]), "take");
      check(rig_run_set_buffer(copy_yx[d], 0, y[d]), "set");
      check(rig_run_set_buffer(copy_yx[d], 1, x[d]), "set");
      rig_part launch = bench_add_part(module[d], 1024);
      rig_access rw[1] = {RIG_ACCESS_READ_WRITE};
      check(rig_submission_make(dev[d], &launch, 1, rw, 1, &subs[k]), "launch submission");
      check(rig_run_take(subs[k++], &step[d]), "take");
      check(rig_run_set_buffer(step[d], 0, x[d]), "set");
      uint32_t scalars[2] = {1024, 1};
      check(rig_run_set_scalars(step[d], scalars, sizeof scalars), "scalars");
      // The batch rows' runs: a batch names each run once (a run is in one call at a time).
      for (int b = 0; b < kBatch; ++b) {
        check(rig_run_take(subs[k - 1], &steps[d][b]), "take");
        check(rig_run_set_buffer(steps[d][b], 0, x[d]), "set");
        check(rig_run_set_scalars(steps[d][b], scalars, sizeof scalars), "scalars");
      }
    }
    for (int b = 0; b < kBatch; ++b) {
      check(rig_buffer_create(dev[0], 4096, RIG_MEMORY_DEVICE, &p[b]), "p");
      check(rig_buffer_create(dev[0], 4096, RIG_MEMORY_DEVICE, &q[b]), "q");
      for (int d = 0; d < 2; ++d) {
        pd[d][b] = p[b], qd[d][b] = q[b];
        if (d) check(rig_buffer_borrow(dev[1], p[b], &pd[1][b]), "borrow p"), check(rig_buffer_borrow(dev[1], q[b], &qd[1][b]), "borrow q");
        check(rig_run_take(subs[2 * d], &forth[d][b]), "take");
        check(rig_run_set_buffer(forth[d][b], 0, pd[d][b]), "set");
        check(rig_run_set_buffer(forth[d][b], 1, qd[d][b]), "set");
        check(rig_run_take(subs[2 * d], &back[d][b]), "take");
        check(rig_run_set_buffer(back[d][b], 0, qd[d][b]), "set");
        check(rig_run_set_buffer(back[d][b], 1, pd[d][b]), "set");
      }
    }
  }

  // Operation i of the chain, on device (alternate ? i % 2 : 0). Copies alternate x->y and y->x, so each
  // reads what the one before wrote; kernels work in place.
  rig_point last = 0;
  void op(bool kernels, bool alternate, int i) {
    int d = alternate ? i % 2 : 0;
    rig_run r = kernels ? step[d] : (i % 2 ? copy_yx[d] : copy_xy[d]);
    check(rig_submit(r, nullptr, 0, &last), "submit");
  }
  void finish() { check(rig_wait_point(last, UINT64_MAX), "wait"); }

  // (a16): operations i .. i+kBatch-1 as one rig_submit_many where i starts a batch (nothing for the rest
  // of its operations), batch n on device n % 2 (the next batch reads what this one wrote).
  void batch_op(bool kernels, int i) {
    if (i % kBatch) return;
    int n = i / kBatch, d = n % 2, count = std::min(kBatch, ops - i);
    rig_run *runs = kernels ? steps[d] : n % 2 ? back[d] : forth[d];
    rig_point points[kBatch];
    check(rig_submit_many(runs, count, nullptr, 0, points), "submit_many");
    last = points[count - 1];
  }

  ~RigChain() {
    for (int d = 0; d < 2; ++d) {
      rig_run_release(copy_xy[d]);
      rig_run_release(copy_yx[d]);
      rig_run_release(step[d]);
      for (int b = 0; b < kBatch; ++b) rig_run_release(forth[d][b]), rig_run_release(back[d][b]), rig_run_release(steps[d][b]);
    }
    for (int b = 0; b < kBatch; ++b) {
      rig_buffer_release(pd[1][b]), rig_buffer_release(qd[1][b]);
      rig_buffer_release(p[b]), rig_buffer_release(q[b]);
    }
    for (auto s : subs)
      if (s) rig_submission_release(s);
    for (int d = 1; d >= 0; --d) {
      rig_buffer_release(x[d]);
      rig_buffer_release(y[d]);
      rig_module_release(module[d]);
    }
    rig_device_release(dev[1]);
    rig_device_release(dev[0]);
  }
};

// ---- raw rows ----------------------------------------------------------------------------------------------

struct RawChain {
  const Api &api;
  const rig::stream::Gpu *gpu[2];
  cu::Stream stream[2] = {};
  cu::Event event[2] = {};
  cu::DevicePtr x = 0, y = 0;
  cu::DevicePtr p[kBatch] = {}, q[kBatch] = {};  // the batch rows' pairs (RigChain::p, q)
  cu::Module module[2] = {};
  cu::Function add[2] = {};
  uint64_t *words = nullptr;  // two timeline words in pinned, mapped memory
  cu::DevicePtr word_address = 0;
  uint64_t value[2] = {0, 0};
  static constexpr size_t kRing = 1024;  // as rig's event timeline
  std::vector<cu::Event> ring[2];

  RawChain(const Api &a, unsigned g0, unsigned g1) : api(a) {
    check(rig::stream::gpu_at(api.family, g0, &gpu[0]), "gpu");
    check(rig::stream::gpu_at(api.family, g1, &gpu[1]), "gpu");
    for (int d = 0; d < 2; ++d) {
      rig::stream::Current c(*gpu[d]);
      check_cu(api, api.cuStreamCreate(&stream[d], cu::STREAM_NON_BLOCKING), "stream");
      check_cu(api, api.cuEventCreate(&event[d], cu::EVENT_DISABLE_TIMING), "event");
      ring[d].resize(kRing);
      for (auto &e : ring[d]) check_cu(api, api.cuEventCreate(&e, cu::EVENT_DISABLE_TIMING), "ring event");
      check_cu(api, api.cuModuleLoadDataEx(&module[d], kernels_ptx, 0, nullptr, nullptr), "module");
      check_cu(api, api.cuModuleGetFunction(&add[d], module[d], "rig_add_u32"), "function");
      if (d == 1 && gpu[1] != gpu[0]) {
        cu::Result r = api.cuCtxEnablePeerAccess(gpu[0]->context, 0);
        if (r != cu::SUCCESS && r != cu::ERROR_PEER_ACCESS_ALREADY_ENABLED) check_cu(api, r, "peer access");
      }
    }
    rig::stream::Current c(*gpu[0]);
    check_cu(api, api.cuMemAlloc(&x, 4096), "x");
    check_cu(api, api.cuMemAlloc(&y, 4096), "y");
    for (int b = 0; b < kBatch; ++b) check_cu(api, api.cuMemAlloc(&p[b], 4096), "p"), check_cu(api, api.cuMemAlloc(&q[b], 4096), "q");
    void *w = nullptr;
    check_cu(api, api.cuMemHostAlloc(&w, 4096, cu::HOST_ALLOC_PORTABLE | cu::HOST_ALLOC_MAPPED), "words");
    words = static_cast<uint64_t *>(w);
    words[0] = words[1] = 0;
    check_cu(api, api.cuMemHostGetDevicePointer(&word_address, w, 0), "word address");
  }

  cu::Result enqueue(int d, int i, bool kernels) {
    if (kernels) {
      cu::DevicePtr addr[2] = {x, x};
      uint32_t scalars[2] = {1024, 1};
      void *params[3] = {&addr[0], &addr[1], scalars};
      return api.cuLaunchKernel(add[d], 4, 1, 1, 256, 1, 1, 0, stream[d], params, nullptr);
    }
    return i % 2 ? api.cuMemcpyAsync(x, y, 4096, stream[d]) : api.cuMemcpyAsync(y, x, 4096, stream[d]);
  }

  void finish() {
    for (int d = 0; d < 2; ++d) check_cu(api, api.cuStreamSynchronize(stream[d]), "sync");
  }

  // What a program written by hand does about contexts: its GPU's context is current on its thread
  // (cudaSetDevice, once); across two GPUs it switches before each operation. No save and restore: that
  // is rig's promise to leave the caller's context alone, and rig's rows pay for it.
  void switch_to(int d) {
    if (gpu[0] != gpu[1]) check_cu(api, api.cuCtxSetCurrent(gpu[d]->context), "context");
  }

  // (b) events: wait for the other stream's last record, enqueue, record.
  void events(bool kernels, int i) {
    int d = i % 2;
    switch_to(d);
    if (i) check_cu(api, api.cuStreamWaitEvent(stream[d], event[1 - d], 0), "wait event");
    check_cu(api, enqueue(d, i, kernels), "enqueue");
    check_cu(api, api.cuEventRecord(event[d], stream[d]), "record");
  }

  // (b16): (a16)'s operations with (b)'s calls, one operation at a time: wait for the other stream's last
  // record, enqueue, record. Operation i is copy i % kBatch of its batch (p into q, the next batch q into p).
  void events_batched(bool kernels, int i) {
    int n = i / kBatch, d = n % 2, b = i % kBatch;
    switch_to(d);
    if (i) check_cu(api, api.cuStreamWaitEvent(stream[d], event[1 - d], 0), "wait event");
    cu::Result r = kernels ? enqueue(d, i, true)
                   : n % 2 ? api.cuMemcpyAsync(p[b], q[b], 4096, stream[d])
                           : api.cuMemcpyAsync(q[b], p[b], 4096, stream[d]);
    check_cu(api, r, "enqueue");
    check_cu(api, api.cuEventRecord(event[d], stream[d]), "record");
  }

  // (c) synchronize after each operation.
  void synchronized(bool kernels, int i) {
    int d = i % 2;
    switch_to(d);
    check_cu(api, enqueue(d, i, kernels), "enqueue");
    check_cu(api, api.cuStreamSynchronize(stream[d]), "sync");
  }

  // (d) the calls rig's driver makes with its event timeline: a wait for the other stream's last value's
  // event, enqueue, a record of this value's event of the ring. No context query and no switch: each call
  // names the stream, which the driver runs in the stream's context (drivers/stream/gpu.h, CurrentWhenAsked).
  // alternate false: (d1), all on the first stream with no wait, as rig's (a1).
  // size: how many of the ring's events are used in turn; query_every: a cuEventQuery of the event
  // size/2 values back every that many values (what a small ring needs to know an event free again).
  // (ds) 16 events and (dq) 32 with a query every 16, against (d)'s 1024: the driver's time for events
  // touched once per 1024 records, not once per 2 as (b)'s, and what a small ring's questions cost.
  void ring_events(bool kernels, int i, bool alternate = true, size_t size = kRing, int query_every = 0) {
    int d = alternate ? i % 2 : 0;
    if (i && alternate) check_cu(api, api.cuStreamWaitEvent(stream[d], ring[1 - d][value[1 - d] % size], 0), "wait event");
    check_cu(api, enqueue(d, i, kernels), "enqueue");
    ++value[d];
    if (query_every && value[d] % query_every == 0 && value[d] > size / 2)
      (void)api.cuEventQuery(ring[d][(value[d] - size / 2) % size]);
    check_cu(api, api.cuEventRecord(ring[d][value[d] % size], stream[d]), "record");
  }

  // (e) the calls of rig's memory-operation timeline: wait for the other stream (on one GPU an event
  // recorded at its tail, across GPUs the other timeline's value), enqueue, write our timeline value.
  bool has_memops() const { return api.cuStreamWaitValue64 && api.cuStreamWriteValue64; }
  void memops(bool kernels, int i) {
    int d = i % 2;
    rig::stream::Current c(*gpu[d]);
    if (i && gpu[0] == gpu[1]) {
      check_cu(api, api.cuEventRecord(event[d], stream[1 - d]), "record on the other stream");
      check_cu(api, api.cuStreamWaitEvent(stream[d], event[d], 0), "wait event");
    } else if (i) {
      check_cu(api, api.cuStreamWaitValue64(stream[d], word_address + 8 * (1 - d), value[1 - d], cu::WAIT_VALUE_GEQ),
               "wait value");
    }
    check_cu(api, enqueue(d, i, kernels), "enqueue");
    check_cu(api, api.cuStreamWriteValue64(stream[d], word_address + 8 * d, ++value[d], cu::WRITE_VALUE_FENCED),
             "write value");
  }

  ~RawChain() {
    for (int d = 0; d < 2; ++d) {
      rig::stream::Current c(*gpu[d]);
      api.cuStreamSynchronize(stream[d]);
      api.cuStreamDestroy(stream[d]);
      api.cuEventDestroy(event[d]);
      for (auto e : ring[d]) api.cuEventDestroy(e);
      api.cuModuleUnload(module[d]);
    }
    rig::stream::Current c(*gpu[0]);
    api.cuMemFree(x);
    api.cuMemFree(y);
    for (int b = 0; b < kBatch; ++b) api.cuMemFree(p[b]), api.cuMemFree(q[b]);
    api.cuMemFreeHost(words);
  }
};

// The ratio line of rows x over y: wall times, or host times (bursts).
void print_ratio(const char *label, const std::vector<Row> &rows, const char *x, const char *y, bool wall,
                 const char *goal) {
  auto s = bench::ratio(rows, x, y, [&](const Result &p, const Result &q) {
    return wall ? p.wall_us / q.wall_us : p.host_us / q.host_us;
  });
  if (s) bench::print_ratio(label, x, y, *s, goal);
}

void report(const char *what, const std::vector<Row> &rows) {
  std::printf("\n%s (%d ops a pass, %d rounds; rows in a shuffled order each round; host time in bursts of %d)\n",
              what, ops, repeats, kBurst);
  // wall: the continuous pass; enq: its enqueueing per op; tail: its final wait, in all (us); host: bursts.
  std::printf("  %-50s %8s %8s %8s %9s %8s %8s\n", "row (us per op)", "wall med", "wall min", "enq med", "tail med",
              "host med", "host min");
  for (const Row &r : rows) {
    std::vector<double> w, e, t, h;
    for (const Result &x : r.rounds) {
      w.push_back(x.wall_us);
      e.push_back(x.enqueue_us);
      t.push_back(x.tail_us);
      h.push_back(x.host_us);
    }
    std::printf("  %-50s %8.3f %8.3f %8.3f %9.1f %8.3f %8.3f\n", r.name, bench::quantile(w, 0.5),
                bench::quantile(w, 0), bench::quantile(e, 0.5), bench::quantile(t, 0.5), bench::quantile(h, 0.5),
                bench::quantile(h, 0));
  }
  // Ratios are medians of per-round ratios. b2 is b measured again: b2/b is the noise between two rows
  // making identical calls, the floor under which no other ratio means anything.
  print_ratio("wall", rows, "a", "b", true, "   goal <= 1.03 (issue 35)");
  print_ratio("host", rows, "a", "d", false, "   goal <= 1.03 (issue 35)");
  print_ratio("wall", rows, "b2", "b", true, "   noise: the same row twice");
  print_ratio("host", rows, "b2", "b", false, "   noise: the same row twice");
  print_ratio("host", rows, "d", "b", false, "   rig's calls by hand over (b)'s");
  print_ratio("wall", rows, "d", "b", true, "   rig's calls by hand over (b)'s");
  std::string ds_over_b = "   (d) with " + std::to_string(ds_events) + " events, not 1024, over (b)";
  std::string d_over_ds = "   1024 events over " + std::to_string(ds_events);
  std::string aw_over_b = "   rig with events from a window of " + std::to_string(aw_window) + " (RIG_EVENT_WINDOW)";
  std::string aw_over_a = "   a window of " + std::to_string(aw_window) + " over the ring of 1024";
  print_ratio("host", rows, "ds", "b", false, ds_over_b.c_str());
  print_ratio("host", rows, "dq", "b", false, "   (d) with 32 events and a query every 16, over (b)");
  print_ratio("wall", rows, "dq", "b", true, "   (d) with 32 events and a query every 16, over (b)");
  print_ratio("host", rows, "d", "ds", false, d_over_ds.c_str());
  print_ratio("wall", rows, "aw", "b", true, aw_over_b.c_str());
  print_ratio("host", rows, "aw", "a", false, aw_over_a.c_str());
  print_ratio("wall", rows, "aw", "a", true, aw_over_a.c_str());
  print_ratio("wall", rows, "a", "br", true, "   against (b) through the CUDA runtime, the issue's program");
  print_ratio("host", rows, "a", "br", false, "   against (b) through the CUDA runtime");
  print_ratio("wall", rows, "a", "c", true, "");
  print_ratio("wall", rows, "am", "b", true, "   memory-operation timeline");
  print_ratio("host", rows, "am", "e", false, "   memory-operation timeline over its calls by hand");
  const Row *a = bench::find_row(rows, "a"), *a1 = bench::find_row(rows, "a1");
  bench::Spread edge =
      bench::spread(bench::paired(*a, *a1, [](const Result &p, const Result &q) { return p.host_us - q.host_us; }));
  std::printf("  cross-device edge, host a - a1: median %.3f us  95%% CI %.3f-%.3f  quartiles %.3f-%.3f   goal <= 0.4\n",
              edge.median, edge.lo, edge.hi, edge.q1, edge.q3);
  // What the edge costs by hand on this host (the wait on the other stream's event, and alternating streams):
  // the part of the 0.4 us goal no submit path can take off, so only where it is under 0.4 does rig decide it.
  const Row *d = bench::find_row(rows, "d"), *d1 = bench::find_row(rows, "d1");
  bench::Spread calls =
      bench::spread(bench::paired(*d, *d1, [](const Result &p, const Result &q) { return p.host_us - q.host_us; }));
  std::printf("  the edge's calls by hand, host d - d1: median %.3f us  95%% CI %.3f-%.3f%s\n", calls.median, calls.lo,
              calls.hi, calls.lo > 0.4 ? "   (over the 0.4 us goal by themselves on this host)" : "");
  // What rig adds to an edge over the wait call itself, and to an operation with no edge.
  std::vector<double> extra;
  for (size_t k = 0; k < a->rounds.size(); ++k)
    extra.push_back((a->rounds[k].host_us - a1->rounds[k].host_us) - (d->rounds[k].host_us - d1->rounds[k].host_us));
  bench::Spread x = bench::spread(extra);
  std::printf("  rig's own part of the edge, (a - a1) - (d - d1): median %.3f us  95%% CI %.3f-%.3f\n", x.median, x.lo,
              x.hi);
  print_ratio("host", rows, "a1", "d1", false, "   one device, no edge: rig over its calls by hand");
  print_ratio("wall", rows, "a16", "b16", true, "   a batch of 16 operations per submit against (b)'s calls, goal <= 0.8");
  print_ratio("host", rows, "a16", "b16", false, "   a batch of 16 operations per submit against (b)'s calls, goal <= 0.8");
  if (!timing) return;
  // Where host time goes, under the timing interposer: inside the driver's entries, and the rest.
  std::printf("  under the timing interposer (bursts of %d; us per op, medians over rounds):\n", kBurst);
  std::printf("  %-6s %9s %9s %9s %9s\n", "row", "host", "driver", "own", "calls");
  for (const Row &r : rows) {
    std::vector<double> h, d, o, c;
    for (const Result &x : r.rounds)
      h.push_back(x.timed_us), d.push_back(x.driver_us), o.push_back(x.timed_us - x.driver_us), c.push_back(x.calls);
    std::printf("  %-6s %9.3f %9.3f %9.3f %9.3f\n", r.key, bench::quantile(h, 0.5), bench::quantile(d, 0.5),
                bench::quantile(o, 0.5), bench::quantile(c, 0.5));
  }
  for (auto [x, y] : {std::pair{"a", "d"}, std::pair{"a", "b"}, std::pair{"d", "b"}, std::pair{"a1", "d1"}}) {
    const Row *p = bench::find_row(rows, x), *q = bench::find_row(rows, y);
    if (!p || !q) continue;
    bench::Spread own = bench::spread(bench::paired(*p, *q, [](const Result &u, const Result &v) {
      return (u.timed_us - u.driver_us) - (v.timed_us - v.driver_us);
    }));
    bench::Spread drv = bench::spread(
        bench::paired(*p, *q, [](const Result &u, const Result &v) { return u.driver_us / v.driver_us; }));
    std::printf("  %s against %s: own time %+.3f us [%.3f, %.3f]; driver time %.3fx [%.3f, %.3f]\n", x, y, own.median,
                own.lo, own.hi, drv.median, drv.lo, drv.hi);
  }
}

void bench_pair(const Api &api, unsigned g0, unsigned g1) {
  std::string n0 = "cuda:" + std::to_string(g0), n1 = "cuda:" + std::to_string(g1);
  std::printf("\n=== %s and %s ===\n", n0.c_str(), n1.c_str());
  RigChain rig(n0.c_str(), n1.c_str());
  // A chain whose devices open with `name` set to `value` (the timeline and its window are chosen when a
  // device opens), the variable restored after.
  auto opened_with = [&](const char *name, const char *value) {
    const char *was = std::getenv(name);
    std::string saved = was ? was : "";
    setenv(name, value, 1);
    auto chain = std::make_unique<RigChain>(n0.c_str(), n1.c_str());
    if (was)
      setenv(name, saved.c_str(), 1);
    else
      unsetenv(name);
    return chain;
  };
  std::unique_ptr<RigChain> rig_memops = opened_with("RIG_CUDA_TIMELINE", "memops");
  // (aw)'s window and (ds)'s events: 32 and 16 unless BENCH_AW_WINDOW and BENCH_DS_EVENTS say (a power of
  // two each, at most 1024): what a window of N costs rig against (b), beside what N events cost by hand.
  auto knob = [](const char *name, size_t fallback) {
    const char *text = std::getenv(name);
    size_t n = text ? std::strtoul(text, nullptr, 10) : fallback;
    if (n < 2 || n > RawChain::kRing || (n & (n - 1))) {
      std::fprintf(stderr, "%s=%s: a power of two from 2 to %zu\n", name, text ? text : "", RawChain::kRing);
      std::exit(2);
    }
    return n;
  };
  aw_window = knob("BENCH_AW_WINDOW", 32);
  ds_events = knob("BENCH_DS_EVENTS", 16);
  std::unique_ptr<RigChain> rig_window = opened_with("RIG_EVENT_WINDOW", std::to_string(aw_window).c_str());
  const std::string aw_name = "(aw) rig, alternating, events from a window of " + std::to_string(aw_window);
  const std::string ds_name = "(ds) (d) with " + std::to_string(ds_events) + " events a stream in turn, not 1024";
  RawChain raw(api, g0, g1);
  bench::RuntimeChain runtime(g0, g1, kernels_ptx, "rig_add_u32");
  if (!runtime.ready()) std::printf("(br) left out: %s\n", runtime.why().c_str());
  // The thread's current context is the first GPU's, as in a program that called cudaSetDevice: rig's
  // rows find it current (and on two GPUs switch and restore it), the hand-written rows use it as is.
  check_cu(api, api.cuCtxSetCurrent(raw.gpu[0]->context), "context");
  for (bool kernels : {false, true}) {
    std::vector<Row> rows = {
        {"a", "(a)  rig, alternating devices", [&](int i) { rig.op(kernels, true, i); }, [&] { rig.finish(); }},
        {"a1", "(a1) rig, one device (no cross-device edge)", [&](int i) { rig.op(kernels, false, i); },
         [&] { rig.finish(); }},
        {"aw", aw_name.c_str(), [&](int i) { rig_window->op(kernels, true, i); },
         [&] { rig_window->finish(); }},
        {"am", "(am) rig, alternating, memory-operation timeline", [&](int i) { rig_memops->op(kernels, true, i); },
         [&] { rig_memops->finish(); }},
        {"b", "(b)  streams + events + cuStreamWaitEvent", [&](int i) { raw.events(kernels, i); },
         [&] { raw.finish(); }},
        {"b2", "(b2) (b) again, measured apart", [&](int i) { raw.events(kernels, i); }, [&] { raw.finish(); }},
        {"c", "(c)  synchronize after each", [&](int i) { raw.synchronized(kernels, i); }, [] {}},
        {"d", "(d)  rig's own calls by hand (event ring)", [&](int i) { raw.ring_events(kernels, i); },
         [&] { raw.finish(); }},
        {"d1", "(d1) (d) on one stream (no wait), as (a1)", [&](int i) { raw.ring_events(kernels, i, false); },
         [&] { raw.finish(); }},
        {"ds", ds_name.c_str(), [&](int i) { raw.ring_events(kernels, i, true, ds_events); },
         [&] { raw.finish(); }},
        {"dq", "(dq) (d) with 32 events a stream and a query every 16", [&](int i) { raw.ring_events(kernels, i, true, 32, 16); },
         [&] { raw.finish(); }},
    };
    rows.push_back({"a16", "(a16) rig, 16 operations a submit (rig_submit_many)", [&](int i) { rig.batch_op(kernels, i); },
                    [&] { rig.finish(); }});
    rows.push_back({"b16", "(b16) (a16)'s ops with (b)'s calls, one at a time",
                    [&](int i) { raw.events_batched(kernels, i); }, [&] { raw.finish(); }});
    if (runtime.ready() && (!kernels || runtime.has_kernels()))
      rows.push_back({"br", "(br) (b) through the CUDA runtime (cudart)", [&](int i) { runtime.op(kernels, i); },
                      [&] { runtime.finish(); }});
    else if (runtime.ready())
      std::printf("(br) left out of the kernel chain: this runtime could not load or launch the PTX kernel\n");
    if (raw.has_memops())
      rows.push_back({"e", "(e)  rig's memory-operation calls by hand", [&](int i) { raw.memops(kernels, i); },
                      [&] { raw.finish(); }});
    // Every row once to warm up, then rounds in a shuffled order (bench::run_rounds).
    for (Row &r : rows) bench::pass(ops, kBurst, r.op, r.finish);
    bench::run_rounds(rows, repeats, measure);
    report(kernels ? "tiny kernels (rig_add_u32 on 4 KiB, in place)" : "4 KiB device-to-device copies", rows);
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 1) ops = std::atoi(argv[1]);
  if (argc > 2) repeats = std::atoi(argv[2]);
  int pairs = argc > 3 ? std::atoi(argv[3]) : 2;  // 1: one GPU only (cuda:0 twice)
  if (ops < 2 || repeats < 1) {
    std::fprintf(stderr, "usage: %s [ops a pass >= 2] [rounds >= 1] [pairs: 1 one GPU, 2 also two]\n", argv[0]);
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
  const char *timeline = std::getenv("RIG_CUDA_TIMELINE");
  if ((timing = timing_query())) calibrate_tsc();
  std::printf("rig CUDA chain benchmark on %s (%d GPU%s), driver %d, rig timeline: %s\n", name, count,
              count > 1 ? "s" : "", api->driver_version, timeline && *timeline ? timeline : "default");
  bench_pair(*api, 0, 0);
  if (count > 1 && pairs > 1) bench_pair(*api, 0, 1);
  return 0;
}
