#include "capi/devices.h"

#include <array>
#include <atomic>

#include "capi/handles.h"
#include "core/error.h"
#include "core/registry.h"

namespace rig::capi {
namespace {

// The handle word of each device index, set once when its handle is minted. Leaked on purpose, like the
// registry: handles stay answerable during static destruction.
std::array<std::atomic<uint64_t>, 65536> &words() {
  static auto *w = new std::array<std::atomic<uint64_t>, 65536>{};
  return *w;
}

}  // namespace

uint64_t host_word() {
  // The host is index 0: it is never stamped, so no point ever names it.
  static uint64_t word = insert(Kind::device, std::shared_ptr<void>(std::shared_ptr<void>(), &host_device()));
  return word;
}

rig_status give_device(Device &device, rig_device *out) {
  // The handle shares the device without owning it: devices outlive their handles.
  uint64_t word = insert(Kind::device, std::shared_ptr<void>(std::shared_ptr<void>(), &device));
  if (!word) return RIG_OUT_OF_MEMORY;
  // release: pairs with device_handle's acquire load.
  words()[device.index()].store(word, std::memory_order_release);
  *out = handle_of<rig_device>(word);
  return RIG_OK;
}

rig_status open_device(std::unique_ptr<DriverDevice> driver, rig_device *out) {
  Device *d = nullptr;
  if (rig_status s = register_device(std::move(driver), &d); s != RIG_OK) return s;
  return give_device(*d, out);
}

rig_status device_handle(Device &d, rig_device *out) {
  if (d.is_host()) {
    *out = handle_of<rig_device>(host_word());
    return RIG_OK;
  }
  if (d.released()) return fail(RIG_LOST, "%s was released", d.info().name.c_str());
  *out = handle_of<rig_device>(words()[d.index()].load(std::memory_order_acquire));
  return RIG_OK;
}

}  // namespace rig::capi
