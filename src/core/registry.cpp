#include "core/registry.h"

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "capi/handles.h"
#include "core/device.h"
#include "core/error.h"

namespace rig {
namespace {

// The one registry of mutable process-wide state. Leaked on purpose: devices and their drivers stay valid
// through static destruction, when other libraries' destructors may still call in.
struct Registry {
  std::array<std::atomic<Device *>, 65536> devices{};
  std::atomic<uint32_t> next_index{1};
  std::mutex names_lock;
  std::map<std::string, std::unique_ptr<std::mutex>> name_locks;
  std::mutex kept_lock;
  std::vector<Memory> kept;  // memory a lost device may still use

  std::mutex &name_lock(const std::string &name) {
    std::lock_guard g(names_lock);
    auto &m = name_locks[name];
    if (!m) m = std::make_unique<std::mutex>();
    return *m;
  }
};

Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

}  // namespace

Device *device_at(uint32_t index) {
  if (index == 0 || index > 65535) return nullptr;
  // acquire: pairs with the release store in open_device, so the Device is fully built when seen.
  return registry().devices[index].load(std::memory_order_acquire);
}

rig_status open_device(std::unique_ptr<DriverDevice> driver, rig_device *out) {
  auto &r = registry();
  uint32_t index = r.next_index.fetch_add(1, std::memory_order_relaxed);
  if (index > 65535) return fail(RIG_OUT_OF_MEMORY, "open: all 65535 device indices of this process are used");
  rig_device_kind kind = driver->info().kind;
  Device *d = new Device(index, std::move(driver), kind);  // owned by the registry until exit
  r.devices[index].store(d, std::memory_order_release);
  // The handle shares the device without owning it: devices outlive their handles.
  uint64_t word = capi::insert(capi::Kind::device, std::shared_ptr<void>(std::shared_ptr<void>(), d));
  if (!word) return RIG_OUT_OF_MEMORY;
  d->set_handle(word);
  *out = capi::handle_of<rig_device>(word);
  return RIG_OK;
}

void keep_forever(const Memory &memory) {
  auto &r = registry();
  std::lock_guard g(r.kept_lock);
  r.kept.push_back(memory);
}

std::mutex &device_name_lock(const std::string &name) { return registry().name_lock(name); }

}  // namespace rig
