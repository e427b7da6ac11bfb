#include "test_driver.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capi/devices.h"
#include "capi/handles.h"
#include "core/device.h"
#include "core/error.h"
#include "core/registry.h"
#include "drivers/memory/memory_device.h"

namespace rig {
namespace {

class TestDriver;

// All test devices share one world lock: a wait that sleeps runs every queue, as GPUs progress on their own.
struct World {
  std::recursive_mutex lock;
  std::condition_variable_any changed;
  std::vector<TestDriver *> devices;
  std::vector<std::string> log;
};

World &world() {
  static World *w = new World;
  return *w;
}

void log_line(std::string s) { world().log.push_back(std::move(s)); }

class TestDriver final : public DriverDevice {
 public:
  explicit TestDriver(std::string name) {
    info_.name = std::move(name);
    info_.framework = "test";
    info_.model = "test driver";
    info_.kind = RIG_DEVICE_GPU;
    info_.integrated = 0;
    info_.runs_host_kernels = true;
    info_.commits_at_hand_over = false;
    std::lock_guard g(world().lock);
    world().devices.push_back(this);
  }

  rig_status allocate(size_t length, rig_memory, Memory *out) override {
    void *p = std::aligned_alloc(4096, (length + 4095) / 4096 * 4096 + 4096);
    if (!p) return fail(RIG_OUT_OF_MEMORY, "test driver: no memory");
    *out = {p, reinterpret_cast<uintptr_t>(p), 0, 0, length};
    return RIG_OK;
  }
  void free(const Memory &m) noexcept override { std::free(m.host); }
  rig_status map_host(void *host, size_t length, bool, Memory *out) override {
    *out = {host, reinterpret_cast<uintptr_t>(host), 0, 0, length};
    return RIG_OK;
  }
  rig_status map_peer(DriverDevice &, const Memory &m, Memory *out) override {
    if (!m.host) return fail(RIG_UNMAPPABLE, "test driver: not host memory");
    *out = m;
    return RIG_OK;
  }
  void unmap(const Memory &) noexcept override {}
  rig_status copy_to_host(const Memory &m, size_t off, void *dst, size_t n) override {
    std::memcpy(dst, static_cast<char *>(m.host) + off, n);
    return RIG_OK;
  }
  rig_status copy_from_host(const Memory &m, size_t off, const void *src, size_t n) override {
    std::memcpy(static_cast<char *>(m.host) + off, src, n);
    return RIG_OK;
  }
  rig_status load_module(rig_module_format, const void *, size_t, std::unique_ptr<DriverModule> *) override {
    return fail(RIG_UNSUPPORTED, "test driver: no modules");
  }
  rig_status check_part(const Part &p) override {
    if (p.kind == RIG_PART_LAUNCH) return fail(RIG_UNSUPPORTED, "test driver: no launches");
    return RIG_OK;
  }
  bool can_wait_in_queue(const DriverDevice &producer) const override {
    return dynamic_cast<const TestDriver *>(&producer) != nullptr;
  }
  // A binding longer than the limit cannot be taken (as Vulkan's maxStorageBufferRange).
  rig_status over_limit(const Work &work) const {
    for (size_t i = 0; i < work.slots.size(); ++i)
      if (binding_limit && work.slots[i].length > binding_limit)
        return fail(RIG_INVALID_ARGUMENT, "test driver: slot %zu binds %zu bytes, more than %s's limit of %zu", i,
                    work.slots[i].length, info_.name.c_str(), binding_limit);
    return RIG_OK;
  }
  rig_status check_work(const Work &work) const override { return over_limit(work); }

  rig_status hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) override {
    auto &w = world();
    std::unique_lock g(w.lock);
    // A driver refuses at hand-over what it cannot take, which loses the device: the engine must have
    // refused it earlier through check_work.
    if (rig_status s = over_limit(work); s != RIG_OK) return s;
    std::string line = "hand_over " + info_.name + " " + std::to_string(value) + " [";
    for (size_t i = 0; i < waits.size(); ++i)
      line += (i ? " " : "") + waits[i].producer->info().name + ":" + std::to_string(waits[i].value);
    log_line(line + "]");
    in_hand_over = true;
    w.changed.notify_all();
    while (block_hand_over) w.changed.wait(g);
    in_hand_over = false;
    // A full queue: the hardware makes progress while the caller waits for room.
    while (room && queue.size() >= room) {
      log_line("full " + info_.name);
      if (!run_world_once()) {
        g.unlock();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        g.lock();
      }
    }
    Entry e;
    e.value = value;
    e.parts.assign(work.parts.begin(), work.parts.end());
    e.memories.reserve(work.slots.size());
    for (auto &b : work.slots) e.memories.push_back(b.memory ? *b.memory : Memory{});
    for (size_t i = 0; i < work.slots.size(); ++i) {
      Binding b = work.slots[i];
      b.memory = &e.memories[i];
      e.slots.push_back(b);
    }
    e.waits.assign(waits.begin(), waits.end());
    e.committed = !hold;
    queue.push_back(std::move(e));
    ++handed;
    if (hold && commit_every && handed % commit_every == 0) commit_locked("by itself");
    w.changed.notify_all();
    return RIG_OK;
  }

  rig_status commit() override {
    std::lock_guard g(world().lock);
    commit_locked("");
    return RIG_OK;
  }

  uint64_t signaled() const override { return signaled_.load(std::memory_order_acquire); }

  rig_status wait(uint64_t value, Deadline deadline) override {
    auto &w = world();
    std::unique_lock g(w.lock);
    log_line("wait " + info_.name + " " + std::to_string(value));
    if (interrupt_next) {
      interrupt_next = false;
      return fail(RIG_INTERRUPTED, "test driver: wait interrupted");
    }
    auto started = Clock::now();
    for (;;) {
      while (run_world_once()) {
      }
      if (signaled() >= value) return RIG_OK;
      if (lost()) return fail(RIG_LOST, "%s lost", info_.name.c_str());
      if (interrupted()) return fail(RIG_INTERRUPTED, "wait interrupted");
      if (deadline.passed()) return fail(RIG_TIMEOUT, "timeout");
      if (hang_bound_ns && Clock::now() - started > std::chrono::nanoseconds(hang_bound_ns)) {
        log_line("hang " + info_.name);
        report_loss("hang past the driver's bound");
        return fail(RIG_LOST, "%s hung", info_.name.c_str());
      }
      w.changed.wait_for(g, std::chrono::milliseconds(1));
    }
  }

  // Runs the front entry if it can run. Called with the world lock held.
  bool step_one() {
    if (queue.empty() || (lost() && !runs_on_after_loss)) return false;
    Entry &e = queue.front();
    if (!e.committed) return false;
    if (stall_at && e.value == stall_at) return false;
    for (auto &qw : e.waits) {
      if (qw.producer->lost()) {
        log_line("fault " + info_.name + " " + std::to_string(e.value) + " (waited on lost " +
                 qw.producer->info().name + ")");
        report_loss((qw.producer->info().name + " lost").c_str());
        return false;
      }
      if (qw.producer->signaled() < qw.value) return false;
    }
    if (fault_at && e.value == fault_at) {
      log_line("fault " + info_.name + " " + std::to_string(e.value));
      report_loss("test driver fault");
      return false;
    }
    log_line("run " + info_.name + " " + std::to_string(e.value));
    for (const Part &p : e.parts) run_host_part(p, e.slots);
    signaled_.store(e.value, std::memory_order_release);
    queue.pop_front();
    world().changed.notify_all();
    return true;
  }

  // One pass over every device; true if anything ran.
  static bool run_world_once() {
    bool any = false;
    for (TestDriver *d : world().devices)
      while (d->step_one()) any = true;
    return any;
  }

  void commit_locked(const char *how) {
    log_line(std::string("commit ") + info_.name + (*how ? std::string(" ") + how : ""));
    for (auto &e : queue) e.committed = true;
  }

  struct Entry {
    uint64_t value = 0;
    std::vector<Part> parts;
    std::vector<Memory> memories;
    std::vector<Binding> slots;
    std::vector<QueueWait> waits;
    bool committed = false;
  };

  std::deque<Entry> queue;
  std::atomic<uint64_t> signaled_{0};
  bool hold = false;
  unsigned commit_every = 0;
  unsigned room = 0;
  size_t binding_limit = 0;
  bool block_hand_over = false;
  bool in_hand_over = false;
  uint64_t fault_at = 0, stall_at = 0, hang_bound_ns = 0;
  bool interrupt_next = false;
  bool runs_on_after_loss = false;
  uint64_t handed = 0;

  // tdrv_lose: a fault reported from outside the queue (another thread's view of the device).
  void lose_from_outside(const char *why, bool runs_on) {
    runs_on_after_loss = runs_on;
    log_line("lose " + info_.name);
    report_loss(why);
  }
};

TestDriver *test_driver(rig_device d) {
  capi::Pinned<Device> p(capi::word_of(d), capi::Kind::device, "test driver");
  if (!p) return nullptr;
  return dynamic_cast<TestDriver *>(&p->driver());
}

}  // namespace
}  // namespace rig

using namespace rig;

extern "C" {

rig_status tdrv_open(const char *name, rig_device *out) {
  return capi::open_device(std::make_unique<TestDriver>(name), out);
}

#define WITH(d, body)                                  \
  do {                                                 \
    TestDriver *t = test_driver(d);                    \
    if (!t) std::abort();                              \
    std::lock_guard g(world().lock);                   \
    body;                                              \
    world().changed.notify_all();                      \
  } while (0)

void tdrv_set_hold(rig_device d, int hold) { WITH(d, t->hold = hold != 0); }
void tdrv_set_commit_every(rig_device d, unsigned k) { WITH(d, t->commit_every = k); }
void tdrv_set_room(rig_device d, unsigned room) { WITH(d, t->room = room); }
void tdrv_set_binding_limit(rig_device d, size_t bytes) { WITH(d, t->binding_limit = bytes); }
void tdrv_set_block_hand_over(rig_device d, int block) { WITH(d, t->block_hand_over = block != 0); }
void tdrv_set_fault_at(rig_device d, uint64_t v) { WITH(d, t->fault_at = v); }
void tdrv_set_stall_at(rig_device d, uint64_t v) { WITH(d, t->stall_at = v); }
void tdrv_set_hang_bound_ns(rig_device d, uint64_t ns) { WITH(d, t->hang_bound_ns = ns); }
void tdrv_interrupt_next_wait(rig_device d) { WITH(d, t->interrupt_next = true); }
void tdrv_lose(rig_device d, const char *why, int runs_on) { WITH(d, t->lose_from_outside(why, runs_on != 0)); }

unsigned tdrv_step(rig_device d, unsigned n) {
  unsigned ran = 0;
  WITH(d, while (ran < n && t->step_one()) ++ran);
  return ran;
}

unsigned tdrv_run_all(void) {
  std::lock_guard g(world().lock);
  unsigned ran = 0;
  for (bool any = true; any;) {
    any = false;
    for (TestDriver *t : world().devices)
      while (t->step_one()) any = true, ++ran;
  }
  return ran;
}

unsigned tdrv_queued(rig_device d) {
  unsigned n = 0;
  WITH(d, n = static_cast<unsigned>(t->queue.size()));
  return n;
}

int tdrv_in_hand_over(rig_device d) {
  int n = 0;
  WITH(d, n = t->in_hand_over);
  return n;
}

void tdrv_log_clear(void) {
  std::lock_guard g(world().lock);
  world().log.clear();
}

unsigned tdrv_log_count(void) {
  std::lock_guard g(world().lock);
  return static_cast<unsigned>(world().log.size());
}

void tdrv_log_line(unsigned i, char *buf, size_t size) {
  std::lock_guard g(world().lock);
  const auto &log = world().log;
  std::snprintf(buf, size, "%s", i < log.size() ? log[i].c_str() : "");
}

int tdrv_log_find(const char *text, unsigned from) {
  std::lock_guard g(world().lock);
  const auto &log = world().log;
  for (size_t i = from; i < log.size(); ++i)
    if (log[i].find(text) != std::string::npos) return static_cast<int>(i);
  return -1;
}

}  // extern "C"
