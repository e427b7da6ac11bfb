// The Vulkan driver: "vulkan:N" for every physical device with Vulkan 1.2, timeline semaphores and a
// compute queue, in the order the loader enumerates them. Opening a name again gives another rig device
// (its own timeline, command buffers and, among the first RIG_VULKAN_QUEUES (2) opened, its own queue) over the
// same VkDevice, which is kept while any rig device on it lives.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/driver.h"
#include "core/error.h"
#include "drivers/vulkan/context.h"
#include "drivers/vulkan/device.h"
#include "drivers/vulkan/instance.h"

namespace rig {

namespace vulkan {
namespace {

class VulkanDriver final : public Driver {
 public:
  const char *prefix() const override { return "vulkan"; }

  std::vector<std::string> list() override {
    std::vector<std::string> names;
    Instance *instance = Instance::get();
    if (!instance) return names;
    for (const PhysicalDevice &pd : instance->devices()) names.push_back(pd.name);
    return names;
  }

  rig_status open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) override {
    Instance *instance = Instance::get();
    if (!instance) return RIG_NOT_FOUND;  // the message says why Vulkan could not be loaded
    auto devices = instance->devices();
    if (ordinal >= devices.size())
      return fail(RIG_NOT_FOUND, "Vulkan: no device vulkan:%u (%zu found with Vulkan 1.2, timeline semaphores and "
                  "a compute queue)", ordinal, devices.size());
    std::shared_ptr<Context> ctx;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (contexts_.size() < devices.size()) contexts_.resize(devices.size());
      ctx = contexts_[ordinal].lock();
      // A lost VkDevice stays lost: a device opened after a loss gets a new one.
      if (!ctx || ctx->lost()) {
        if (rig_status s = Context::make(*instance, devices[ordinal], &ctx); s != RIG_OK) return s;
        contexts_[ordinal] = ctx;
      }
    }
    return VulkanDevice::open(std::move(ctx), devices[ordinal].name, out);
  }

 private:
  std::mutex mutex_;
  // Weak: a VkDevice goes with the last rig device (and the last object) on it.
  std::vector<std::weak_ptr<Context>> contexts_;
};

}  // namespace
}  // namespace vulkan

Driver *vulkan_driver() {
  static vulkan::VulkanDriver driver;
  return &driver;
}

}  // namespace rig
