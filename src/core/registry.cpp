#include "core/registry.h"

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <list>
#include <map>
#include <pthread.h>
#include <mutex>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "core/testing.h"

namespace rig {

constinit std::atomic<Device *> device_table[65536] = {};

namespace {

// The one registry of mutable process-wide state. Leaked on purpose: devices and their drivers stay valid
// through static destruction, when other libraries' destructors may still call in.
struct Registry {
  std::atomic<uint32_t> next_index{1};
  std::mutex names_lock;
  std::map<std::string, std::unique_ptr<std::mutex>> name_locks;
  std::mutex kept_lock;
  std::vector<Memory> kept;  // memory a lost device may still use
  std::vector<std::shared_ptr<void>> kept_objects;  // objects holding such memory (keep_forever)
  std::vector<std::mutex *> inherited_name_locks;  // a forked child's old name locks, kept (see below)
  std::mutex listed_lock;
  std::list<std::string> listed;  // every name device_names gave out: a list, so given pointers stay valid

  std::mutex &name_lock(const std::string &name) {
    std::lock_guard g(names_lock);
    auto &m = name_locks[name];
    if (!m) m = std::make_unique<std::mutex>();
    return *m;
  }
};

Registry &registry();

// Fork. A child of fork() has one thread: whatever another parent thread held (a device's turn, a driver's
// lock, a name's lock while a driver opened a device) stays held there forever, and a GPU context belongs
// to the parent. So in the child every inherited device is lost ("inherited across fork") before any rig
// call can reach it: its waits and submits answer RIG_LOST at once, without taking its turn or calling its
// driver. Devices the child opens are new and work. pthread_atfork rather than a pid check at each entry:
// the handlers run only at fork, while getpid() is a system call glibc no longer caches, on every submit.
void before_fork() {
  // The registry's own short-held locks, so that the child gets them in a known state.
  registry().names_lock.lock();
  registry().kept_lock.lock();
}
void after_fork_in_parent() {
  registry().kept_lock.unlock();
  registry().names_lock.unlock();
}
void after_fork_in_child() {
  Registry &r = registry();
  r.kept_lock.unlock();
  r.names_lock.unlock();
  // A name's lock may be held by a parent thread opening a device: the child gets new ones. The old ones
  // are never destroyed (a locked mutex may not be), but kept listed, so that a leak checker in the child
  // sees them still reachable.
  for (auto &[name, lock] : r.name_locks) {
    r.inherited_name_locks.push_back(lock.release());
    lock = std::make_unique<std::mutex>();
  }
  uint32_t end = std::min<uint32_t>(r.next_index.load(std::memory_order_relaxed), 65536);
  for (uint32_t i = 1; i < end; ++i)
    if (Device *d = device_table[i].load(std::memory_order_relaxed)) d->lose_inherited();
}

Registry &registry() {
  static Registry *r = [] {
    auto *made = new Registry;
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    return made;
  }();
  return *r;
}

}  // namespace

rig_status open_device(const std::string &name, Device **out) {
  size_t colon = name.find(':');
  if (colon == std::string::npos)
    return fail(RIG_INVALID_ARGUMENT, "device_open: \"%s\" is not DRIVER:N (cuda:0, hip:0, vulkan:0)", name.c_str());
  std::string prefix = name.substr(0, colon);
  for (Driver *d : drivers()) {
    if (prefix != d->prefix()) continue;
    std::lock_guard g(registry().name_lock(name));
    std::unique_ptr<DriverDevice> dev;
    if (rig_status s = d->open_named(name.substr(colon + 1), &dev); s != RIG_OK) return s;
    return register_device(std::move(dev), out);
  }
  return fail(RIG_NOT_FOUND, "device_open: no driver \"%s\" in this build", prefix.c_str());
}

std::vector<const char *> device_names() {
  auto &r = registry();
  std::lock_guard g(r.listed_lock);
  std::vector<const char *> names;
  for (Driver *d : drivers())
    for (const std::string &n : d->list()) {
      auto kept = std::find(r.listed.begin(), r.listed.end(), n);
      names.push_back((kept != r.listed.end() ? *kept : r.listed.emplace_back(n)).c_str());
    }
  return names;
}

Device &host_device() {
  static Device *host = [] {
    std::unique_ptr<DriverDevice> made;
    // The memory driver, first in drivers(), makes it; it is part of every build (no engine without it).
    for (Driver *d : drivers())
      if (d->open_host(&made) == RIG_OK) break;
    if (!made) std::abort();
    return new Device(0, std::move(made), RIG_DEVICE_HOST);  // owned by the registry until exit
  }();
  return *host;
}

rig_status register_device(std::unique_ptr<DriverDevice> driver, Device **out) {
  auto &r = registry();
  uint32_t index = r.next_index.fetch_add(1, std::memory_order_relaxed);
  if (index > 65535) return fail(RIG_OUT_OF_MEMORY, "open: all 65535 device indices of this process are used");
  rig_device_kind kind = driver->info().kind;
  Device *d = new Device(index, std::move(driver), kind);  // owned by the registry until exit
  device_table[index].store(d, std::memory_order_seq_cst);  // seq_cst: see testing::set_collect_observer
  d->set_observed(testing::collect_observer.fn.load(std::memory_order_seq_cst) != nullptr);
  *out = d;
  return RIG_OK;
}

void keep_forever(const Memory &memory) {
  auto &r = registry();
  std::lock_guard g(r.kept_lock);
  r.kept.push_back(memory);
}

void keep_forever(std::shared_ptr<void> object) {
  auto &r = registry();
  std::lock_guard g(r.kept_lock);
  r.kept_objects.push_back(std::move(object));
}

}  // namespace rig
