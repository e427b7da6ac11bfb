#include "core/allocation.h"

#include "core/error.h"
#include "core/mutate.h"
#include "core/registry.h"

namespace rig {

rig_status wait_stamp(uint64_t point, Deadline deadline) {
  if (!point) return RIG_OK;
  Device *d = device_at(point_device(point));
  if (!d) return fail(RIG_NOT_FOUND, "no device has index %u", point_device(point));
  return d->wait(point_value(point), deadline);
}

Allocation::Allocation(Device &owner, const Memory &base, size_t length, bool read_only, bool owned)
    : owner_(owner), base_(base), length_(length), read_only_(read_only), owned_(owned) {}

Allocation::Allocation(Device &host, void *data, size_t length, bool read_only, rig_release_fn release,
                       void *user)
    : owner_(host), length_(length), read_only_(read_only), owned_(false), release_(release),
      release_user_(user) {
  base_.host = data;
  base_.address = reinterpret_cast<uintptr_t>(data);
  base_.length = length;
}

rig_status Allocation::wait_all_uses() {
  if (!rule_on(6)) return RIG_OK;
  rig_status result = RIG_OK;
  stamps_.for_each_use([&](uint64_t p) {
    rig_status s = wait_stamp(p, Deadline::forever());
    if (s != RIG_OK && result == RIG_OK) result = s;
  });
  return result;
}

rig_status Allocation::wait_last_write() {
  if (!rule_on(5)) return RIG_OK;
  return wait_stamp(stamps_.last_write(), Deadline::forever());
}

rig_status Allocation::memory_for(Device &device, const Memory **out) {
  if (&device == &owner_) {
    *out = &base_;
    return RIG_OK;
  }
  std::lock_guard g(lock_);
  for (auto &m : mappings_)
    if (m.device == &device) {
      *out = &m.memory;
      return RIG_OK;
    }
  Memory mapped;
  rig_status s;
  // Memory of a driver's device is reached as a peer's; the host's and memory devices' as host memory.
  if (owner_.kind() == RIG_DEVICE_GPU || owner_.kind() == RIG_DEVICE_CPU)
    s = device.driver().map_peer(owner_.driver(), base_, &mapped);
  else
    s = device.driver().map_host(base_.host, length_, read_only_, &mapped);
  if (s != RIG_OK) return s;
  mappings_.push_back({&device, mapped});
  *out = &mappings_.back().memory;
  return RIG_OK;
}

Allocation::~Allocation() {
  // Rule 6: memory goes back to a driver, or to its owner, only once no work may still use it. A use that
  // can never be reached (a lost device's) keeps the memory for the life of the process.
  if (wait_all_uses() != RIG_OK) {
    keep_forever(base_);
    return;
  }
  for (auto &m : mappings_) m.device->driver().unmap(m.memory);
  if (owned_) owner_.driver().free(base_);
  if (release_) release_(release_user_);
}

}  // namespace rig
