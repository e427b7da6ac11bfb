// Model-based test: random programs over memory devices and test-driver devices (held work, self-commits),
// 8 allocations with views, borrows, wraps, host reads and writes, explicit waits and steps. Every submit
// must collect exactly the points a plain reference model of the rules names, and its work, when it runs,
// must find every one of those points completed and the bytes the model expects. The seed is printed on
// failure (RIG_MODEL_SEED=... reproduces; RIG_MODEL_PROGRAMS sets the count).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

constexpr int kDevices = 4;     // 0, 2: memory devices; 1, 3: test driver
constexpr int kAllocations = 8;
constexpr size_t kBytes = 64;

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

// What the engine collected for the last submit on this thread.
thread_local std::vector<uint64_t> collected;
void observe(void *, uint32_t, const uint64_t *points, size_t n) { collected.assign(points, points + n); }

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

struct Program {
  Rng rng;
  Alloc allocs[kAllocations];
  std::mutex model_lock;  // guards the models in the threaded phase

  void make_allocation(int a) {
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

  void drop_allocation(int a) {
    Alloc &x = allocs[a];
    for (auto &b : x.on) OK(rig_buffer_release(b)), b = nullptr;
    OK(rig_buffer_release(x.owner));
    x.owner = nullptr;
  }

  // One submit on device d over 1..3 slots; `reads_only` for the threaded phase.
  void submit(int d, bool reads_only) {
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
    rig_part p = {sizeof p};
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

  void host_read(int a) {
    uint64_t v = 0;
    Alloc &x = allocs[a];
    OK(rig_buffer_read_into(x.on[rng.below(kDevices)], 0, &v, 8));  // through any buffer: same stamps
    if (v != x.model.version)
      flag("seed " + std::to_string(seed) + " program " + std::to_string(program) + ": host read version " +
           std::to_string(v) + ", the model says " + std::to_string(x.model.version));
  }

  void host_write(int a) {
    Alloc &x = allocs[a];
    x.model.version = next_version++;
    OK(rig_buffer_write_from(x.on[rng.below(kDevices)], 0, &x.model.version, 8));
  }

  void random_op(bool reads_only, int first_device, int devices_n) {
    int d = first_device + rng.below(devices_n);
    switch (rng.below(reads_only ? 3 : 10)) {
      case 0:
      case 1:
        submit(d, reads_only);
        break;
      case 2:
        if (rt_is_test_driver(devices[d])) tdrv_step(devices[d], 1 + rng.below(3));
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
        submit(d, false);
    }
  }
};

void run_programs(bool threaded) {
  const char *env_seed = std::getenv("RIG_MODEL_SEED");
  seed = env_seed ? std::strtoull(env_seed, nullptr, 10) : static_cast<uint64_t>(std::time(nullptr));
  const char *env_n = std::getenv("RIG_MODEL_PROGRAMS");
  int programs = env_n ? std::atoi(env_n) : 5000;
  std::printf("model: seed %llu, %d programs%s\n", (unsigned long long)seed, programs, threaded ? ", threaded" : "");
  const char *names[kDevices] = {"M0", "T1", "M2", "T3"};
  for (int d = 0; d < kDevices; ++d) {
    if (d % 2 == 0)
      OK(rig_memory_device(names[d], &devices[d]));
    else
      OK(tdrv_open(names[d], &devices[d]));
    rig_device_info info = {sizeof info};
    OK(rig_device_get_info(devices[d], &info));
    index_of[d] = info.index;
    done_upto[d] = 0;
  }
  rig::testing::set_collect_observer(observe, nullptr);
  for (program = 0; program < programs && failure.empty(); ++program) {
    Program p;
    p.rng.s = seed * 1000003u + static_cast<uint64_t>(program) * 7919u + 1;
    for (int d = 1; d < kDevices; d += 2) {
      tdrv_set_hold(devices[d], p.rng.below(2));
      tdrv_set_commit_every(devices[d], p.rng.below(4));
    }
    for (int a = 0; a < kAllocations; ++a) p.make_allocation(a);
    for (int i = 0; i < 12; ++i) p.random_op(false, 0, kDevices);
    if (threaded) {
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
          rig_part part = {sizeof part};
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
    for (int a = 0; a < kAllocations; ++a) p.host_read(a);
    for (int a = 0; a < kAllocations; ++a) p.drop_allocation(a);
  }
  rig::testing::set_collect_observer(nullptr, nullptr);
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
  const CMUnitTest tests[] = {
      cmocka_unit_test(every_submit_waits_for_exactly_what_the_model_says),
      cmocka_unit_test(concurrent_reads_in_the_middle_keep_the_model),
  };
  return cmocka_run_group_tests_name("model", tests, nullptr, nullptr);
}
