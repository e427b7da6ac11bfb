// The memory driver's entry in the registry (core/drivers.cpp), registered as the GPU drivers are: it opens
// memory devices by any name ("memory:A" is the memory device A) and makes the host device. It lists no
// names: a memory device exists once opened, any number of them, so there is nothing to find.
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "drivers/memory/memory_device.h"

namespace rig {
namespace {

class MemoryDriver final : public Driver {
 public:
  const char *prefix() const override { return "memory"; }
  std::vector<std::string> list() override { return {}; }
  // The memory device called N: an ordinal is a name like any other here.
  rig_status open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) override {
    return open_named(std::to_string(ordinal), out);
  }
  rig_status open_named(const std::string &name, std::unique_ptr<DriverDevice> *out) override {
    if (name.empty()) return fail(RIG_INVALID_ARGUMENT, "memory_device: the name is null or empty");
    if (name.size() > 255) return fail(RIG_INVALID_ARGUMENT, "memory_device: the name is longer than 255 bytes");
    *out = std::make_unique<MemoryDevice>(name, RIG_DEVICE_MEMORY);
    return RIG_OK;
  }
  rig_status open_host(std::unique_ptr<DriverDevice> *out) override {
    *out = std::make_unique<MemoryDevice>("host", RIG_DEVICE_HOST);
    return RIG_OK;
  }
};

}  // namespace

Driver *memory_driver() {
  static MemoryDriver *driver = new MemoryDriver;  // leaked, as the registry: valid through static destruction
  return driver;
}

}  // namespace rig
