// Model-based test: random programs over the suite's device kinds (RIG_TEST_KINDS; device i is of kind
// i % count), 8 allocations with views, borrows, wraps, host reads and writes, explicit waits and steps.
// Every submit must collect exactly the points a plain reference model of the rules names.
// - The default kinds (memory+test: memory devices and test-driver devices with held work and
//   self-commits): the work is a host kernel that, when it runs, must find every one of those points
//   completed and the version words the model expects.
// - Any other kinds (memory+cuda, cuda, memory, vulkan, ...): a GPU runs no host kernel, so the work is
//   copies and fills between the program's allocations (whole or through views), and the model tracks
//   every byte of every allocation as the program's operations give it in program order. Host reads at
//   random moments and at the end of each program compare every byte read with the model; on devices that
//   do run host kernels each submit also ends with one that checks the bytes it reads when it runs.
// The seed is printed (RIG_MODEL_SEED=... reproduces; RIG_MODEL_PROGRAMS sets the count).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "rigtest.h"
#include "test_driver.h"
}
#include "core/testing.h"

namespace {

constexpr int kDevices = 4;     // default kinds: 0, 2 memory devices; 1, 3 test driver
constexpr int kAllocations = 8;
constexpr size_t kBytes = 64;   // default kinds: the version word and some room for views
// Other kinds: enough bytes that work a missing wait leaves unfinished on a real GPU is still running when
// the host or the next device looks; whole pages, since a GPU registers whole pages.
constexpr size_t kGpuBytes = 64 * 1024;
constexpr size_t kPage = 4096;
// Programs per test in the other kinds: each moves and compares whole allocations, and the fake drivers
// run every copy on a thread of their own; this many keeps each fake-CUDA variant to seconds on 2 cores.
constexpr int kBytesPrograms = 300;

struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
};

uint64_t seed;
int program;
std::string failure;  // first failure, reported by the main thread
std::mutex failure_lock;

void flag(const std::string &what) {
  std::lock_guard g(failure_lock);
  if (failure.empty()) failure = what;
}

rig_device devices[kDevices];
uint32_t index_of[kDevices];
std::atomic<uint64_t> done_upto[kDevices];  // the last value whose work ran, per device
bool runs_host_kernels[kDevices];           // a GPU refuses RIG_PART_HOST_KERNEL
bool is_test_driver[kDevices];              // held work, self-commits, steps
bool bytes_mode;                            // kinds other than the default: copies, fills, a byte model
size_t alloc_bytes = kBytes;
std::string kinds_name;                     // "memory+cuda", ...

std::string where_now() { return "seed " + std::to_string(seed) + " program " + std::to_string(program); }

std::string device_name(int d) { return "device " + std::to_string(d) + " (" + rt_kind(d) + ")"; }

// Borrows a kind cannot make (Vulkan maps no host memory by default; nothing maps another GPU's device
// memory into host memory): those devices skip work on that allocation. Counted by what, printed once.
struct Skips {
  std::mutex lock;
  std::map<std::string, std::pair<long, std::string>> by_what;  // what -> count, the first reason
} skips;

void note_skip(const std::string &what, const char *why) {
  std::lock_guard g(skips.lock);
  auto &e = skips.by_what[what];
  if (e.first++ == 0) e.second = why;
}

// What the bytes-mode programs did, printed so that a run that checked little shows it.
struct Tally {
  std::atomic<long> submits{0}, copies{0}, fills{0}, kernels{0}, reads{0}, bytes_compared{0};
  std::atomic<long> batches{0}, batch_runs{0};  // every kind: rig_submit_many calls and their runs
} tally;

void print_batches() {
  std::printf("model: %ld batches of %ld runs in all, each run's collect checked\n", tally.batches.exchange(0),
              tally.batch_runs.exchange(0));
  // On a driver double: how often the driver was handed a batch of copies (CUDA's cuMemcpyBatchAsync).
  if (rt_query_fn query = rt_double_query()) std::printf("model: the driver double's copy batches so far: %lld\n", query("calls:copy_batch"));
}

void print_tally() {
  std::printf("model: %ld submits (%ld copies, %ld fills, %ld host kernels), %ld host reads comparing %ld bytes\n",
              tally.submits.exchange(0), tally.copies.exchange(0), tally.fills.exchange(0), tally.kernels.exchange(0),
              tally.reads.exchange(0), tally.bytes_compared.exchange(0));
}

void print_skips() {
  std::lock_guard g(skips.lock);
  for (auto &[what, e] : skips.by_what)
    std::printf("model: skipped %ld time(s): %s (%s)\n", e.first, what.c_str(), e.second.c_str());
  skips.by_what.clear();
}

// What the engine collected for the last submit on this thread.
thread_local std::vector<uint64_t> collected;
// A batch (rig_submit_many) reports once per run, in order: every report since the batch's start.
thread_local std::vector<std::vector<uint64_t>> collected_runs;
void observe(void *, uint32_t, const uint64_t *points, size_t n) {
  collected.assign(points, points + n);
  collected_runs.push_back(collected);
}

// The reference model: per allocation, the last write and each device's last use; its bytes' version.
struct ModelAllocation {
  uint64_t last_write = 0;
  std::map<uint32_t, uint64_t> uses;  // device index -> point
  uint64_t version = 0;               // what the first 8 bytes hold once all ordered work ran
};

struct Alloc {
  rig_buffer owner = nullptr;            // created on a device, or a wrap on the host
  rig_buffer on[kDevices] = {};          // the buffer each device uses (owner, borrow, or a view of one)
  std::vector<uint8_t> *wrapped = nullptr;
  ModelAllocation model;
  // Bytes mode: where on[d] lies in the allocation (null where d cannot borrow it), what made the
  // allocation, and its bytes once all work submitted so far ran, in program order.
  size_t base[kDevices] = {}, length[kDevices] = {};
  std::string origin;
  std::vector<uint8_t> bytes;
};

// One slot of a bytes-mode submit: a buffer on the submitting device over [base, base+length) of x.
struct Slot {
  Alloc *x;
  rig_access access;
  rig_buffer buffer;
  size_t base, length;
  bool own_view;  // a view made for this submit alone
};

// The host kernel that ends each bytes-mode submit on a device that runs host kernels: when it runs, the
// points it must follow (of devices whose work marks done_upto) have completed and every slot it reads
// holds the bytes the model gave it at this place in program order; then it writes a ramp into the slots
// the model says it writes.
struct ByteCheck {
  std::vector<uint64_t> must_follow;
  std::vector<std::vector<uint8_t>> expect;  // per slot; empty: not read
  std::vector<int> ramp;                     // per slot: the ramp's first byte; -1: not written
  std::string where;
  int self;
  uint64_t value;
};

struct Check {
  std::vector<uint64_t> must_follow;  // points (device index, value)
  std::vector<uint64_t> reads_version, writes_version;
  uint64_t self_index, value;
  int self;
};

int device_of_index(uint64_t idx) {
  for (int d = 0; d < kDevices; ++d)
    if (index_of[d] == idx) return d;
  return -1;
}

// The work of every submit: checks its predecessors ran and the bytes it reads, then writes its version.
void kernel(void *user, const rig_span *slots, size_t n) {
  auto *c = static_cast<Check *>(user);
  char where[160];
  std::snprintf(where, sizeof where, "seed %llu program %d: work %d:%llu", (unsigned long long)seed, program,
                c->self, (unsigned long long)c->value);
  for (uint64_t p : c->must_follow) {
    int d = device_of_index(rig_point_device_index(p));
    if (d < 0 || done_upto[d].load() < rig_point_value(p))
      flag(std::string(where) + " ran before a point it must follow: device " + std::to_string(d) + " value " +
           std::to_string(rig_point_value(p)));
  }
  for (size_t i = 0; i < n; ++i) {
    uint64_t v;
    std::memcpy(&v, slots[i].data, 8);
    if (c->reads_version[i] != UINT64_MAX && v != c->reads_version[i])
      flag(std::string(where) + " read version " + std::to_string(v) + " in slot " + std::to_string(i) +
           ", the model says " + std::to_string(c->reads_version[i]));
  }
  for (size_t i = 0; i < n; ++i)
    if (c->writes_version[i] != UINT64_MAX) std::memcpy(slots[i].data, &c->writes_version[i], 8);
  done_upto[c->self].store(c->value);
  delete c;
}

uint64_t next_version = 1;

void byte_kernel(void *user, const rig_span *slots, size_t n) {
  auto *c = static_cast<ByteCheck *>(user);
  for (uint64_t p : c->must_follow) {
    int d = device_of_index(rig_point_device_index(p));
    if (d >= 0 && runs_host_kernels[d] && done_upto[d].load() < rig_point_value(p))
      flag(c->where + " ran before a point it must follow: " + device_name(d) + " value " +
           std::to_string(rig_point_value(p)));
  }
  for (size_t i = 0; i < n; ++i) {
    const auto &want = c->expect[i];
    auto *got = static_cast<const uint8_t *>(slots[i].data);
    if (want.empty() || std::memcmp(got, want.data(), want.size()) == 0) continue;  // memcmp: fast under TSan
    for (size_t k = 0; k < want.size(); ++k)
      if (got[k] != want[k]) {
        flag(c->where + ": its host kernel read byte " + std::to_string(got[k]) + " at offset " + std::to_string(k) +
             " of slot " + std::to_string(i) + ", the model says " + std::to_string(want[k]));
        break;
      }
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; c->ramp[i] >= 0 && k < slots[i].length; ++k)
      static_cast<uint8_t *>(slots[i].data)[k] = static_cast<uint8_t>(c->ramp[i] + k);
  done_upto[c->self].store(c->value);
  delete c;
}

// The points a submit on device `self` over `slots` must collect (rules 2, 3, 4): the highest per other
// device. The caller holds the model's lock.
std::map<uint32_t, uint64_t> points_to_follow(uint32_t self, const std::vector<Slot> &slots,
                                              const std::vector<rig_point> &waits) {
  std::map<uint32_t, uint64_t> expect;
  auto want = [&](uint64_t p) {
    if (!p || rig_point_device_index(p) == self) return;
    uint64_t &v = expect[rig_point_device_index(p)];
    v = std::max(v, rig_point_value(p));
  };
  for (const Slot &s : slots) {
    if (s.access & RIG_ACCESS_READ) want(s.x->model.last_write);  // rule 3
    if (s.access & RIG_ACCESS_WRITE)                               // rule 4
      for (auto &[dev, p] : s.x->model.uses) want(p);
  }
  for (rig_point w : waits) want(w);  // rule 2
  return expect;
}

std::string points_text(const std::vector<uint64_t> &points) {
  std::string s = "{";
  for (auto q : points) s += std::to_string(rig_point_device_index(q)) + ":" + std::to_string(rig_point_value(q)) + " ";
  return s + "}";
}

// Compares what the engine collected for this thread's last submit with the model's points.
void check_collected(const std::string &what, const std::map<uint32_t, uint64_t> &expect,
                     const std::vector<uint64_t> &reported = collected) {
  std::vector<uint64_t> got = reported;
  std::sort(got.begin(), got.end());
  std::vector<uint64_t> want;
  for (auto &[dev, v] : expect) want.push_back(rig_point_make(dev, v));
  if (got != want) flag(what + " collected " + points_text(got) + ", the model says " + points_text(want));
}

struct Program {
  Rng rng;
  Alloc allocs[kAllocations];
  std::mutex model_lock;  // guards the models in the threaded phase
  std::mutex trace_lock;
  std::vector<std::string> trace;  // bytes mode: what the program did, printed when it fails

  void make_allocation(int a) {
    if (bytes_mode) return make_allocation_bytes(allocs[a], rng.below(kDevices + 1), 0, kDevices);
    Alloc &x = allocs[a];
    int owner = rng.below(kDevices + 1);  // kDevices: a wrap of host memory
    if (owner == kDevices) {
      x.wrapped = new std::vector<uint8_t>(kBytes + 4096);
      uint8_t *p = x.wrapped->data();
      OK(rig_buffer_wrap(p, kBytes, RIG_ACCESS_READ_WRITE,
                         [](void *u) { delete static_cast<std::vector<uint8_t> *>(u); }, x.wrapped, &x.owner));
    } else {
      OK(rig_buffer_create(devices[owner], kBytes, RIG_MEMORY_DEVICE, &x.owner));
    }
    x.model = {};
    x.model.version = next_version++;
    OK(rig_buffer_write_from(x.owner, 0, &x.model.version, 8));
    for (int d = 0; d < kDevices; ++d) {
      rig_buffer whole = nullptr;
      OK(rig_buffer_borrow(devices[d], x.owner, &whole));
      if (rng.below(3) == 0) {  // a view that still covers the version word
        rig_buffer v = nullptr;
        OK(rig_buffer_view(whole, 0, 8 + rng.below(kBytes - 8), &v));
        OK(rig_buffer_release(whole));
        whole = v;
      }
      x.on[d] = whole;
    }
  }

  void drop_allocation(int a) { drop(allocs[a]); }

  static void drop(Alloc &x) {
    for (auto &b : x.on)
      if (b) OK(rig_buffer_release(b)), b = nullptr;
    OK(rig_buffer_release(x.owner));
    x.owner = nullptr;
  }

  // One submit on device d over 1..3 slots; `reads_only` for the threaded phase.
  void submit(int d, bool reads_only) {
    if (bytes_mode) return submit_bytes(d);
    int n = 1 + rng.below(3);
    std::vector<int> which(n);
    std::vector<rig_access> access(n);
    for (int i = 0; i < n; ++i) {
      which[i] = rng.below(kAllocations);
      access[i] = reads_only ? RIG_ACCESS_READ : static_cast<rig_access>(1 + rng.below(3));
    }
    std::vector<rig_point> waits;
    uint32_t self = index_of[d];
    std::map<uint32_t, uint64_t> expect;  // device index -> highest value
    auto want = [&](uint64_t p) {
      if (!p || rig_point_device_index(p) == self) return;
      uint64_t &v = expect[rig_point_device_index(p)];
      v = std::max(v, rig_point_value(p));
    };
    auto *c = new Check;
    {
      std::lock_guard g(model_lock);
      if (!reads_only && rng.below(4) == 0) {
        int other = rng.below(kDevices);
        uint64_t s = rt_submitted(devices[other]);
        if (s) waits.push_back(rig_point_make(index_of[other], 1 + rng.next() % s));
      }
      for (int i = 0; i < n; ++i) {
        ModelAllocation &m = allocs[which[i]].model;
        if (access[i] & RIG_ACCESS_READ) want(m.last_write);                     // rule 3
        if (access[i] & RIG_ACCESS_WRITE)                                        // rule 4
          for (auto &[dev, p] : m.uses) want(p);
      }
      for (rig_point w : waits) want(w);  // rule 2
      c->self = d;
      c->self_index = self;
      c->value = rt_submitted(devices[d]) + 1;  // one submitter per device: the value it will get
      // A slot over an allocation that another slot writes reads the version before this work.
      for (int i = 0; i < n; ++i) {
        ModelAllocation &m = allocs[which[i]].model;
        c->reads_version.push_back((access[i] & RIG_ACCESS_READ) ? m.version : UINT64_MAX);
        c->writes_version.push_back(UINT64_MAX);
      }
      for (int i = 0; i < n; ++i)
        if (access[i] & RIG_ACCESS_WRITE) {
          // Several slots writing one allocation: the last slot's version wins, as the kernel writes in order.
          uint64_t v = next_version++;
          c->writes_version[i] = v;
        }
    }
    for (auto &[dev, v] : expect) c->must_follow.push_back(rig_point_make(dev, v));
    const std::vector<uint64_t> writes = c->writes_version;  // c belongs to the kernel once submitted
    std::vector<rig_buffer> bufs(n);
    for (int i = 0; i < n; ++i) bufs[i] = allocs[which[i]].on[d];
    // The model's version after this work: the last writing slot's (the kernel writes slots in order).
    rig_part p{};
    p.size = sizeof p;
    p.kind = RIG_PART_HOST_KERNEL;
    p.fn = kernel;
    p.user = c;
    rig_submission sub;
    rig_run run;
    OK(rig_submission_make(devices[d], &p, 1, access.data(), n, &sub));
    OK(rig_run_take(sub, &run));
    for (int i = 0; i < n; ++i) OK(rig_run_set_buffer(run, i, bufs[i]));
    rig_point pt = 0;
    OK(rig_submit(run, waits.data(), waits.size(), &pt));
    std::vector<uint64_t> got = collected;
    std::sort(got.begin(), got.end());
    std::vector<uint64_t> want_points;
    for (auto &[dev, v] : expect) want_points.push_back(rig_point_make(dev, v));
    if (got != want_points) {
      std::string s = "seed " + std::to_string(seed) + " program " + std::to_string(program) + ": submit on " +
                      std::to_string(d) + " collected {";
      for (auto q : got) s += std::to_string(rig_point_device_index(q)) + ":" + std::to_string(rig_point_value(q)) + " ";
      s += "}, the model says {";
      for (auto q : want_points) s += std::to_string(rig_point_device_index(q)) + ":" + std::to_string(rig_point_value(q)) + " ";
      flag(s + "}");
    }
    {
      std::lock_guard g(model_lock);
      for (int i = 0; i < n; ++i) {
        ModelAllocation &m = allocs[which[i]].model;
        uint64_t &u = m.uses[self];
        u = std::max(u, pt);
        if (access[i] & RIG_ACCESS_WRITE) {
          m.last_write = pt;
          m.version = writes[i] != UINT64_MAX ? writes[i] : m.version;
        }
      }
    }
    OK(rig_run_release(run));
    OK(rig_submission_release(sub));
  }

  // ----- batches: runs made as lone submits would be, submitted at once with rig_submit_many -----

  // A run of a batch, made but not submitted: what it must collect (the model's points once the runs
  // before it in the batch are in the model), and what to release after.
  struct Pending {
    rig_run run = nullptr;
    rig_submission sub = nullptr;
    std::map<uint32_t, uint64_t> expect;
    std::string what;
    std::vector<rig_buffer> own_views;
  };

  // Default kinds: a run of submit()'s self-checking kernel on d over 1..3 slots, to be value `value`; the
  // model raised as if it were submitted now.
  Pending make_kernel_run(int d, const std::vector<rig_point> &waits, uint64_t value) {
    Pending out;
    int n = 1 + rng.below(3);
    std::vector<int> which(n);
    std::vector<rig_access> access(n);
    for (int i = 0; i < n; ++i) which[i] = rng.below(kAllocations), access[i] = static_cast<rig_access>(1 + rng.below(3));
    uint32_t self = index_of[d];
    auto *c = new Check;
    std::vector<Slot> slots;
    for (int i = 0; i < n; ++i) slots.push_back({&allocs[which[i]], access[i], nullptr, 0, kBytes, false});
    out.expect = points_to_follow(self, slots, waits);
    for (auto &[dev, v] : out.expect) c->must_follow.push_back(rig_point_make(dev, v));
    c->self = d, c->self_index = self, c->value = value;
    for (int i = 0; i < n; ++i) {
      c->reads_version.push_back((access[i] & RIG_ACCESS_READ) ? allocs[which[i]].model.version : UINT64_MAX);
      c->writes_version.push_back(UINT64_MAX);
    }
    for (int i = 0; i < n; ++i)
      if (access[i] & RIG_ACCESS_WRITE) c->writes_version[i] = next_version++;
    uint64_t pt = rig_point_make(self, value);
    for (int i = 0; i < n; ++i) {
      ModelAllocation &m = allocs[which[i]].model;
      m.uses[self] = std::max(m.uses[self], pt);
      if (access[i] & RIG_ACCESS_WRITE) m.last_write = pt, m.version = c->writes_version[i];
    }
    rig_part p{};
    p.size = sizeof p;
    p.kind = RIG_PART_HOST_KERNEL;
    p.fn = kernel;
    p.user = c;
    OK(rig_submission_make(devices[d], &p, 1, access.data(), n, &out.sub));
    OK(rig_run_take(out.sub, &out.run));
    for (int i = 0; i < n; ++i) OK(rig_run_set_buffer(out.run, i, allocs[which[i]].on[d]));
    out.what = where_now() + ": batch run " + std::to_string(value) + " on " + device_name(d);
    return out;
  }

  // Other kinds: submit_bytes' work on d, to be value `value` (no run where d reaches none of the
  // allocations it picked); the model raised as if it were submitted now.
  Pending make_bytes_run(int d, const std::vector<rig_point> &waits, uint64_t value) {
    Pending out;
    Work w = pick_work(d);
    if (w.slots.empty()) {
      note_skip(device_name(d) + ": a batch's run", "every allocation it picked is one it cannot borrow");
      return out;
    }
    uint32_t self = index_of[d];
    out.expect = points_to_follow(self, w.slots, waits);
    add_byte_parts(w);
    out.what = where_now() + ": batch run " + std::to_string(value) + " on " + device_name(d);
    if (w.check) {
      w.check->value = value;
      for (auto &[dev, v] : out.expect) w.check->must_follow.push_back(rig_point_make(dev, v));
      w.check->where = out.what;
    }
    uint64_t pt = rig_point_make(self, value);
    for (const Slot &s : w.slots) {
      uint64_t &u = s.x->model.uses[self];
      u = std::max(u, pt);
      if (s.access & RIG_ACCESS_WRITE) s.x->model.last_write = pt;
      if (s.own_view) out.own_views.push_back(s.buffer);
    }
    std::vector<rig_access> access;
    for (const Slot &s : w.slots) access.push_back(s.access);
    OK(rig_submission_make(devices[d], w.parts.data(), w.parts.size(), access.data(), access.size(), &out.sub));
    OK(rig_run_take(out.sub, &out.run));
    for (size_t i = 0; i < w.slots.size(); ++i) OK(rig_run_set_buffer(out.run, static_cast<uint32_t>(i), w.slots[i].buffer));
    log(describe(w, pt) + " (in a batch)");
    ++tally.submits;
    return out;
  }

  // A batch of 1..8 runs on d, at times after an explicit wait: each run must collect exactly what the
  // model names for it as the batch's k-th run (the runs before it in the model, as n lone submits would
  // leave it), and gets value submitted+1+k.
  void submit_batch(int d) {
    std::vector<rig_point> waits;
    if (rng.below(4) == 0) {
      int other = rng.below(kDevices);
      uint64_t s = rt_submitted(devices[other]);
      if (s) waits.push_back(rig_point_make(index_of[other], 1 + rng.next() % s));
    }
    uint64_t first = rt_submitted(devices[d]) + 1;  // one submitter per device: the values it will get
    int n = 1 + rng.below(8);
    std::vector<Pending> batch;
    {
      std::lock_guard g(model_lock);
      for (int k = 0; k < n; ++k) {
        uint64_t value = first + batch.size();
        Pending p = bytes_mode ? make_bytes_run(d, waits, value) : make_kernel_run(d, waits, value);
        if (p.run) batch.push_back(std::move(p));
      }
    }
    if (batch.empty()) return;
    std::vector<rig_run> runs;
    for (const Pending &p : batch) runs.push_back(p.run);
    std::vector<rig_point> points(batch.size());
    collected_runs.clear();
    OK(rig_submit_many(runs.data(), runs.size(), waits.data(), waits.size(), points.data()));
    ++tally.batches, tally.batch_runs += static_cast<long>(runs.size());
    if (collected_runs.size() != batch.size())
      flag(where_now() + ": a batch of " + std::to_string(batch.size()) + " runs reported " +
           std::to_string(collected_runs.size()) + " collects");
    for (size_t k = 0; k < batch.size() && k < collected_runs.size(); ++k) {
      check_collected(batch[k].what, batch[k].expect, collected_runs[k]);
      if (points[k] != rig_point_make(index_of[d], first + k))
        flag(batch[k].what + ": got point value " + std::to_string(rig_point_value(points[k])));
    }
    for (Pending &p : batch) {
      OK(rig_run_release(p.run));
      OK(rig_submission_release(p.sub));
      for (rig_buffer b : p.own_views) OK(rig_buffer_release(b));
    }
  }

  void host_read(int a) {
    if (bytes_mode) return host_read_bytes(allocs[a], "allocation " + std::to_string(a), false);
    uint64_t v = 0;
    Alloc &x = allocs[a];
    OK(rig_buffer_read_into(x.on[rng.below(kDevices)], 0, &v, 8));  // through any buffer: same stamps
    if (v != x.model.version)
      flag("seed " + std::to_string(seed) + " program " + std::to_string(program) + ": host read version " +
           std::to_string(v) + ", the model says " + std::to_string(x.model.version));
  }

  void host_write(int a) {
    if (bytes_mode) return host_write_bytes(a);
    Alloc &x = allocs[a];
    x.model.version = next_version++;
    OK(rig_buffer_write_from(x.on[rng.below(kDevices)], 0, &x.model.version, 8));
  }

  // ----- bytes mode: copies and fills, and the bytes they give in program order -----

  void log(const std::string &line) {
    std::lock_guard g(trace_lock);
    trace.push_back(line);
  }

  std::string name_of(const Alloc *x) const {
    return x >= allocs && x < allocs + kAllocations ? "a" + std::to_string(x - allocs) : "scratch";
  }

  // A new allocation owned by `owner` (kDevices: a wrap of host memory) with random bytes, borrowed on
  // devices [first, first+count), each through the whole of it or a view. A borrow a kind cannot make
  // leaves that device without it.
  void make_allocation_bytes(Alloc &x, int owner, int first, int count) {
    x.bytes.resize(alloc_bytes);
    for (size_t k = 0; k < alloc_bytes; k += 8) {
      uint64_t w = rng.next();
      std::memcpy(x.bytes.data() + k, &w, std::min<size_t>(8, alloc_bytes - k));
    }
    if (owner == kDevices) {
      void *p = std::aligned_alloc(kPage, alloc_bytes);  // a GPU registers whole pages
      OK(rig_buffer_wrap(p, alloc_bytes, RIG_ACCESS_READ_WRITE, [](void *u) { std::free(u); }, p, &x.owner));
      x.origin = "a wrap of host memory";
    } else {
      // Device memory only the owner reaches, at times; mapped memory the other kinds can borrow.
      rig_memory memory = !runs_host_kernels[owner] && rng.below(4) == 0 ? RIG_MEMORY_DEVICE : RIG_MEMORY_MAPPED;
      OK(rig_buffer_create(devices[owner], alloc_bytes, memory, &x.owner));
      x.origin = std::string(memory == RIG_MEMORY_DEVICE ? "device" : "mapped") + " memory of " + device_name(owner);
    }
    x.model = {};
    OK(rig_buffer_write_from(x.owner, 0, x.bytes.data(), alloc_bytes));
    for (int d = first; d < first + count; ++d) borrow_on(x, d);
    log("new " + name_of(&x) + ": " + x.origin);
  }

  void borrow_on(Alloc &x, int d) {
    rig_buffer whole = nullptr;
    rig_status s = rig_buffer_borrow(devices[d], x.owner, &whole);
    if (s == RIG_UNMAPPABLE) return note_skip(device_name(d) + " borrowing " + x.origin + ": no work on it there",
                                              rig_last_error());
    OK(s);
    x.base[d] = 0, x.length[d] = alloc_bytes;
    if (rng.below(3) == 0) narrow(rng, &x.on[d], &x.base[d], &x.length[d], whole);
    else x.on[d] = whole;
  }

  // A view over a random non-empty range of `from`, which it replaces.
  static void narrow(Rng &r, rig_buffer *out, size_t *base, size_t *length, rig_buffer from) {
    size_t off = r.next() % *length, len = 1 + r.next() % (*length - off);
    OK(rig_buffer_view(from, off, len, out));
    *base += off, *length = len;
  }

  // A slot on d over an allocation d reaches: its buffer there, or at times a view of it for this submit.
  bool pick_slot(Rng &r, int d, rig_access access, Slot *out) {
    for (int tries = 0; tries < 8; ++tries) {
      Alloc &x = allocs[r.below(kAllocations)];
      if (!x.on[d]) continue;
      *out = {&x, access, x.on[d], x.base[d], x.length[d], false};
      if (r.below(4) == 0) narrow(r, &out->buffer, &out->base, &out->length, x.on[d]), out->own_view = true;
      return true;
    }
    return false;
  }

  struct Work {
    int d;
    std::vector<Slot> slots = {};
    std::vector<rig_part> parts = {};
    ByteCheck *check = nullptr;
  };

  // A fill of a random range of slot i (at times to its end, RIG_WHOLE); the model fills the same bytes.
  static void add_fill(Rng &r, Work &w, uint32_t i) {
    Slot &s = w.slots[i];
    rig_part p = {};
    p.size = sizeof p;
    p.kind = RIG_PART_FILL;
    p.dst_slot = i;
    p.dst_offset = r.next() % s.length;
    size_t n = s.length - p.dst_offset;
    if (r.below(4) != 0) n = 1 + r.next() % n;
    p.length = n == s.length - p.dst_offset && r.below(2) ? RIG_WHOLE : n;
    p.byte = static_cast<uint8_t>(r.next());
    std::memset(s.x->bytes.data() + s.base + p.dst_offset, p.byte, n);
    w.parts.push_back(p);
    ++tally.fills;
  }

  // A copy from slot `from` into slot `to` (at times the whole source from its offset, RIG_WHOLE); false
  // where the ranges overlap in one allocation, which a copy must not.
  static bool add_copy(Rng &r, Work &w, uint32_t from, uint32_t to) {
    const Slot &src = w.slots[from], &dst = w.slots[to];
    rig_part p = {};
    p.size = sizeof p;
    p.kind = RIG_PART_COPY;
    p.src_slot = from, p.dst_slot = to;
    p.src_offset = r.next() % src.length;
    size_t n = src.length - p.src_offset;
    bool whole = n <= dst.length && r.below(3) == 0;
    if (!whole) n = 1 + r.next() % std::min(n, dst.length);
    p.dst_offset = r.next() % (dst.length - n + 1);
    p.length = whole ? RIG_WHOLE : n;
    size_t s0 = src.base + p.src_offset, d0 = dst.base + p.dst_offset;
    if (src.x == dst.x && s0 < d0 + n && d0 < s0 + n) return false;
    std::memcpy(dst.x->bytes.data() + d0, src.x->bytes.data() + s0, n);
    w.parts.push_back(p);
    ++tally.copies;
    return true;
  }

  // The host kernel that ends the work on a device that runs them: reads checked when it runs, then ramps.
  static void add_kernel(Rng &r, Work &w) {
    auto *c = new ByteCheck;
    c->self = w.d;
    c->value = rt_submitted(devices[w.d]) + 1;  // one submitter per device: the value it will get
    for (const Slot &s : w.slots) {
      auto at = s.x->bytes.begin() + static_cast<std::ptrdiff_t>(s.base);
      c->expect.emplace_back();
      if (s.access & RIG_ACCESS_READ) c->expect.back().assign(at, at + static_cast<std::ptrdiff_t>(s.length));
      c->ramp.push_back((s.access & RIG_ACCESS_WRITE) && r.below(2) ? r.below(256) : -1);
    }
    for (size_t i = 0; i < w.slots.size(); ++i)  // after every read: the kernel reads all slots first
      for (size_t k = 0; c->ramp[i] >= 0 && k < w.slots[i].length; ++k)
        w.slots[i].x->bytes[w.slots[i].base + k] = static_cast<uint8_t>(c->ramp[i] + static_cast<int>(k));
    rig_part p = {};
    p.size = sizeof p;
    p.kind = RIG_PART_HOST_KERNEL;
    p.fn = byte_kernel;
    p.user = c;
    w.parts.push_back(p);
    w.check = c;
    ++tally.kernels;
  }

  // Work on d over 1..3 allocations it reaches, each slot read, written or both (none where every
  // allocation it picked is one d cannot borrow).
  Work pick_work(int d) {
    Work w{d};
    int n = 1 + rng.below(3);
    for (int i = 0; i < n; ++i) {
      Slot s;
      if (pick_slot(rng, d, static_cast<rig_access>(1 + rng.below(3)), &s)) w.slots.push_back(s);
    }
    return w;
  }

  // The parts of w: each written slot gets a fill or a copy from a read slot; then, on a device that runs
  // them, the host kernel that checks the reads.
  void add_byte_parts(Work &w) {
    std::vector<uint32_t> readable;
    for (uint32_t i = 0; i < w.slots.size(); ++i)
      if (w.slots[i].access & RIG_ACCESS_READ) readable.push_back(i);
    for (uint32_t i = 0; i < w.slots.size(); ++i) {
      if (!(w.slots[i].access & RIG_ACCESS_WRITE)) continue;
      bool copied = !readable.empty() && rng.below(2) &&
                    add_copy(rng, w, readable[static_cast<size_t>(rng.below(static_cast<int>(readable.size())))], i);
      if (!copied) add_fill(rng, w, i);
    }
    if (runs_host_kernels[w.d]) add_kernel(rng, w);
  }

  std::string describe(const Work &w, rig_point pt) const {
    static const char *acc[] = {"", "R", "W", "RW"};
    std::string s = "submit " + std::to_string(rig_point_value(pt)) + " on " + device_name(w.d) + ":";
    for (const Slot &x : w.slots)
      s += " [" + name_of(x.x) + " " + acc[x.access] + " " + std::to_string(x.base) + "+" + std::to_string(x.length) + "]";
    for (const rig_part &p : w.parts) {
      std::string len = p.length == RIG_WHOLE ? "whole" : std::to_string(p.length);
      if (p.kind == RIG_PART_FILL)
        s += " fill(" + std::to_string(p.dst_slot) + "@" + std::to_string(p.dst_offset) + " " + len + ")";
      else if (p.kind == RIG_PART_COPY)
        s += " copy(" + std::to_string(p.src_slot) + "@" + std::to_string(p.src_offset) + " -> " +
             std::to_string(p.dst_slot) + "@" + std::to_string(p.dst_offset) + " " + len + ")";
      else
        s += " kernel";
    }
    return s;
  }

  // Hands the work to its device after `waits`, checks the points the engine collected against the
  // model's, and raises the model's stamps.
  void submit_work(Work &w, const std::vector<rig_point> &waits) {
    uint32_t self = index_of[w.d];
    std::map<uint32_t, uint64_t> expect;
    {
      std::lock_guard g(model_lock);
      expect = points_to_follow(self, w.slots, waits);
    }
    std::string what = where_now() + ": submit " + std::to_string(rt_submitted(devices[w.d]) + 1) + " on " +
                       device_name(w.d);
    if (w.check) {
      for (auto &[dev, v] : expect) w.check->must_follow.push_back(rig_point_make(dev, v));
      w.check->where = what;
    }
    std::vector<rig_access> access;
    for (const Slot &s : w.slots) access.push_back(s.access);
    rig_submission sub;
    rig_run run;
    OK(rig_submission_make(devices[w.d], w.parts.data(), w.parts.size(), access.data(), access.size(), &sub));
    OK(rig_run_take(sub, &run));
    for (size_t i = 0; i < w.slots.size(); ++i) OK(rig_run_set_buffer(run, static_cast<uint32_t>(i), w.slots[i].buffer));
    rig_point pt = 0;
    OK(rig_submit(run, waits.data(), waits.size(), &pt));  // the kernel owns w.check now
    check_collected(what, expect);
    {
      std::lock_guard g(model_lock);
      for (const Slot &s : w.slots) {
        uint64_t &u = s.x->model.uses[self];
        u = std::max(u, pt);
        if (s.access & RIG_ACCESS_WRITE) s.x->model.last_write = pt;
      }
    }
    log(describe(w, pt));
    ++tally.submits;
    OK(rig_run_release(run));
    OK(rig_submission_release(sub));
    for (const Slot &s : w.slots)
      if (s.own_view) OK(rig_buffer_release(s.buffer));
  }

  // Work on d over 1..3 allocations it reaches: each written slot gets a fill or a copy from a read slot.
  void submit_bytes(int d) {
    Work w = pick_work(d);
    if (w.slots.empty()) return note_skip(device_name(d) + ": a submit", "every allocation it picked is one it cannot borrow");
    std::vector<rig_point> waits;
    if (rng.below(4) == 0) {
      int other = rng.below(kDevices);
      uint64_t s = rt_submitted(devices[other]);
      if (s) waits.push_back(rig_point_make(index_of[other], 1 + rng.next() % s));
    }
    add_byte_parts(w);
    submit_work(w, waits);
  }

  // Reads the allocation through the host, through a random buffer over it (or all of it, through its
  // owner), and compares every byte with the model.
  void host_read_bytes(Alloc &x, const std::string &name, bool whole) {
    int d = whole ? kDevices : rng.below(kDevices + 1);
    bool owner = d == kDevices || !x.on[d];
    size_t base = owner ? 0 : x.base[d], len = owner ? alloc_bytes : x.length[d];
    std::vector<uint8_t> got(len);
    OK(rig_buffer_read_into(owner ? x.owner : x.on[d], 0, got.data(), len));
    log("host read of " + name + " " + std::to_string(base) + "+" + std::to_string(len));
    ++tally.reads, tally.bytes_compared += static_cast<long>(len);
    size_t bad = 0, first = 0;
    for (size_t k = 0; std::memcmp(got.data(), x.bytes.data() + base, len) != 0 && k < len; ++k)
      if (got[k] != x.bytes[base + k] && !bad++) first = k;
    if (bad)
      flag(where_now() + ": host read of " + name + " (" + x.origin + ") through " +
           (owner ? std::string("its owner") : device_name(d) + "'s buffer") + ": " + std::to_string(bad) + " of " +
           std::to_string(len) + " bytes differ from the model, the first at offset " + std::to_string(base + first) +
           ": read " + std::to_string(got[first]) + ", the model says " + std::to_string(x.bytes[base + first]));
  }

  void host_write_bytes(int a) {
    Alloc &x = allocs[a];
    int d = rng.below(kDevices + 1);
    bool owner = d == kDevices || !x.on[d];
    size_t base = owner ? 0 : x.base[d], len = owner ? alloc_bytes : x.length[d];
    size_t off = rng.next() % len, n = 1 + rng.next() % (len - off);
    std::vector<uint8_t> bytes(n);
    for (auto &b : bytes) b = static_cast<uint8_t>(rng.next());
    OK(rig_buffer_write_from(owner ? x.owner : x.on[d], off, bytes.data(), n));
    std::memcpy(x.bytes.data() + base + off, bytes.data(), n);
    log("host write of a" + std::to_string(a) + " " + std::to_string(base + off) + "+" + std::to_string(n));
  }

  // Two threads at once on disjoint devices, {0, 1} and {2, 3}: each copies from the program's allocations
  // (reads only: concurrent writers of one allocation are the program's to order) into a scratch
  // allocation of its own; the host then reads the scratch allocations.
  void concurrent_copies() {
    Alloc scratch[2];
    for (int t = 0; t < 2; ++t) make_allocation_bytes(scratch[t], 2 * t + rng.below(2), 2 * t, 2);
    uint64_t s1 = rng.next() | 1, s2 = rng.next() | 1;
    std::thread a([&] { copies(s1, 0, scratch[0]); }), b([&] { copies(s2, 2, scratch[1]); });
    a.join();
    b.join();
    for (int t = 0; t < 2; ++t) host_read_bytes(scratch[t], "scratch " + std::to_string(t), true), drop(scratch[t]);
  }

  void copies(uint64_t s, int first, Alloc &scratch) {
    Rng r{s};
    for (int i = 0; i < 10; ++i) {
      Work w{first + r.below(2)};
      Slot src;
      if (!scratch.on[w.d] || !pick_slot(r, w.d, RIG_ACCESS_READ, &src)) continue;
      w.slots = {src, {&scratch, RIG_ACCESS_WRITE, scratch.on[w.d], scratch.base[w.d], scratch.length[w.d], false}};
      add_copy(r, w, 0, 1);  // two allocations: never overlapping
      if (runs_host_kernels[w.d]) add_kernel(r, w);
      submit_work(w, {});
    }
  }

  void final_reads() {
    for (int a = 0; a < kAllocations; ++a)
      if (bytes_mode) host_read_bytes(allocs[a], "allocation " + std::to_string(a), true);
      else host_read(a);
  }

  void random_op(bool reads_only, int first_device, int devices_n) {
    int d = first_device + rng.below(devices_n);
    switch (rng.below(reads_only ? 3 : 10)) {
      case 0:
      case 1:
        submit(d, reads_only);
        break;
      case 2:
        if (is_test_driver[d]) tdrv_step(devices[d], 1 + rng.below(3));
        break;
      case 3:
      case 4:
        submit(d, false);
        break;
      case 5:
        host_read(rng.below(kAllocations));
        break;
      case 6:
        host_write(rng.below(kAllocations));
        break;
      case 7: {
        uint64_t s = rt_submitted(devices[d]);
        if (s) OK(rig_device_wait(devices[d], 1 + rng.next() % s, UINT64_MAX));
        break;
      }
      case 8: {  // a fresh allocation: a wrap or a create, with stamps of its own
        int a = rng.below(kAllocations);
        drop_allocation(a);
        make_allocation(a);
        break;
      }
      default:
        submit_batch(d);
    }
  }
};

// Probes whether the device runs host kernels: a GPU refuses the part when the submission is made.
bool accepts_host_kernels(rig_device d) {
  rig_part p = {};
  p.size = sizeof p;
  p.kind = RIG_PART_HOST_KERNEL;
  p.fn = byte_kernel;
  rig_access access = RIG_ACCESS_READ;
  rig_submission sub;
  rig_status s = rig_submission_make(d, &p, 1, &access, 1, &sub);
  if (s == RIG_UNSUPPORTED) return false;
  OK(s);
  OK(rig_submission_release(sub));
  return true;
}

// Opens device d of the suite's kinds ("M0", "T1", ... by kind and place). Driver kinds open first, so
// that a kind this machine lacks skips the test (or fails it, under RIG_REQUIRE) before the rest is open.
bool open_devices() {
  for (int pass = 0; pass < 2; ++pass)
    for (int d = 0; d < kDevices; ++d) {
      const char *kind = rt_kind(d);
      bool host_side = std::strcmp(kind, "memory") == 0 || std::strcmp(kind, "test") == 0;
      if (host_side != (pass == 1)) continue;
      char name[16];
      std::snprintf(name, sizeof name, "%c%d", static_cast<char>(std::toupper(kind[0])), d);
      if (!rt_open_kind(static_cast<size_t>(d), name, &devices[d])) return false;
    }
  for (int d = 0; d < kDevices; ++d) {
    rig_device_info info{};
    info.size = sizeof info;
    OK(rig_device_get_info(devices[d], &info));
    index_of[d] = info.index;
    done_upto[d] = 0;
    runs_host_kernels[d] = accepts_host_kernels(devices[d]);
    is_test_driver[d] = rt_is_test_driver(devices[d]);
  }
  return true;
}

int program_count() {
  const char *env_n = std::getenv("RIG_MODEL_PROGRAMS");
  if (env_n) return std::atoi(env_n);
  return bytes_mode ? kBytesPrograms : 5000;
}

void run_programs(bool threaded) {
  if (!open_devices()) return;
  const char *env_seed = std::getenv("RIG_MODEL_SEED");
  seed = env_seed ? std::strtoull(env_seed, nullptr, 10) : static_cast<uint64_t>(std::time(nullptr));
  int programs = program_count();
  std::printf("model%s: seed %llu, %d programs%s\n", bytes_mode ? ("[" + kinds_name + "]").c_str() : "",
              (unsigned long long)seed, programs, threaded ? ", threaded" : "");
  rig::testing::set_collect_observer(observe, nullptr);
  for (program = 0; program < programs && failure.empty(); ++program) {
    Program p;
    p.rng.s = seed * 1000003u + static_cast<uint64_t>(program) * 7919u + 1;
    for (int d = 0; d < kDevices; ++d)
      if (is_test_driver[d]) {
        tdrv_set_hold(devices[d], p.rng.below(2));
        tdrv_set_commit_every(devices[d], p.rng.below(4));
      }
    for (int a = 0; a < kAllocations; ++a) p.make_allocation(a);
    for (int i = 0; i < 12; ++i) p.random_op(false, 0, kDevices);
    if (threaded && bytes_mode) p.concurrent_copies();
    if (threaded && !bytes_mode) {
      // The middle part: two threads submit reads at once on disjoint devices (Domains: reads only).
      Rng r1{p.rng.next() | 1}, r2{p.rng.next() | 1};
      // Submits themselves: each thread its own generator and devices {0,1} or {2,3}.
      auto reads = [&p](uint64_t s, int first) {
        Rng r{s};
        for (int i = 0; i < 10; ++i) {
          int d = first + r.below(2);
          int a = r.below(kAllocations);
          auto *c = new Check;
          rig_access acc = RIG_ACCESS_READ;
          uint64_t lw, version;
          {
            std::lock_guard g(p.model_lock);
            lw = p.allocs[a].model.last_write;
            version = p.allocs[a].model.version;
          }
          c->self = d;
          c->self_index = index_of[d];
          c->value = rt_submitted(devices[d]) + 1;
          c->reads_version = {version};
          c->writes_version = {UINT64_MAX};
          if (lw && rig_point_device_index(lw) != index_of[d]) c->must_follow.push_back(lw);
          rig_part part{};
          part.size = sizeof part;
          part.kind = RIG_PART_HOST_KERNEL;
          part.fn = kernel;
          part.user = c;
          rig_submission sub;
          rig_run run;
          OK(rig_submission_make(devices[d], &part, 1, &acc, 1, &sub));
          OK(rig_run_take(sub, &run));
          OK(rig_run_set_buffer(run, 0, p.allocs[a].on[d]));
          rig_point pt = 0;
          OK(rig_submit(run, nullptr, 0, &pt));
          c = nullptr;  // owned by the kernel now
          std::vector<uint64_t> got = collected;
          std::vector<uint64_t> want;
          if (lw && rig_point_device_index(lw) != index_of[d]) want.push_back(lw);
          if (got != want) flag("seed " + std::to_string(seed) + ": threaded read collected the wrong points");
          {
            std::lock_guard g(p.model_lock);
            uint64_t &u = p.allocs[a].model.uses[index_of[d]];
            u = std::max(u, pt);
          }
          OK(rig_run_release(run));
          OK(rig_submission_release(sub));
        }
      };
      std::thread a(reads, r1.next() | 1, 0), b(reads, r2.next() | 1, 2);
      a.join();
      b.join();
    }
    for (int i = 0; i < 12; ++i) p.random_op(false, 0, kDevices);
    p.final_reads();
    for (int a = 0; a < kAllocations; ++a) p.drop_allocation(a);
    if (!failure.empty())
      for (const std::string &line : p.trace) std::fprintf(stderr, "  program %d: %s\n", program, line.c_str());
  }
  rig::testing::set_collect_observer(nullptr, nullptr);
  if (bytes_mode) print_tally();
  print_batches();
  print_skips();
  for (int d = 0; d < kDevices; ++d) {
    uint64_t s = rt_submitted(devices[d]);
    if (s) OK(rig_device_wait(devices[d], s, UINT64_MAX));
    OK(rig_device_release(devices[d]));
  }
  if (!failure.empty()) fail_msg("%s", failure.c_str());
}

void every_submit_waits_for_exactly_what_the_model_says(void **) { run_programs(false); }
void concurrent_reads_in_the_middle_keep_the_model(void **) { run_programs(true); }

}  // namespace

int main() {
  for (size_t i = 0; i < rt_kind_count(); ++i) kinds_name += (i ? "+" : "") + std::string(rt_kind(i));
  bytes_mode = kinds_name != "memory+test";  // the default kinds keep the self-checking host kernels
  alloc_bytes = bytes_mode ? kGpuBytes : kBytes;
  const CMUnitTest tests[] = {
      cmocka_unit_test(every_submit_waits_for_exactly_what_the_model_says),
      cmocka_unit_test(concurrent_reads_in_the_middle_keep_the_model),
  };
  std::string group = bytes_mode ? "model[" + kinds_name + "]" : "model";
  return rt_finish(cmocka_run_group_tests_name(group.c_str(), tests, nullptr, nullptr));
}
