// One VkDevice over one physical device, shared by every rig device opened on it ("vulkan:0" opened twice
// gives two rig devices, each with its own timeline semaphore and command buffers, over one Context).
// Sharing the VkDevice is what lets one rig device's queue wait on another's timeline semaphore, and lets a
// borrow between them use the same VkBuffer (map_peer).
#pragma once

#include <rig.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/driver.h"
#include "drivers/vulkan/api.h"
#include "drivers/vulkan/instance.h"

namespace rig::vulkan {

// A VkQueue and the lock Vulkan requires around vkQueueSubmit (queues are externally synchronized).
struct Queue {
  VkQueue handle = VK_NULL_HANDLE;
  std::mutex submit;
};

// The descriptor set layout and pipeline layout of a launch with `bindings` storage buffers (set 0,
// bindings 0..n-1) and the push constant range [0, push_bytes).
struct Layout {
  VkDescriptorSetLayout set = VK_NULL_HANDLE;
  VkPipelineLayout pipeline = VK_NULL_HANDLE;
};

class Context {
 public:
  // The most storage-buffer slots a launch may bind (also bounded by the device's limits).
  static constexpr uint32_t kMaxBindings = 32;

  // Makes the VkDevice with every queue rig uses of the physical device's compute family.
  static rig_status make(Instance &instance, const PhysicalDevice &physical, std::shared_ptr<Context> *out);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  Instance &instance() const { return instance_; }
  const DeviceFunctions &fn() const { return fn_; }
  VkDevice device() const { return device_; }
  const PhysicalDevice &physical() const { return physical_; }
  const VkPhysicalDeviceLimits &limits() const { return physical_.properties.limits; }
  bool host_import() const { return host_import_; }
  // Launch slots are bound with vkCmdPushDescriptorSetKHR (else with descriptor sets from pools).
  bool push_descriptors() const { return push_descriptors_; }
  // VK_KHR_external_memory_fd enabled: device buffers are exportable as opaque fds.
  bool memory_fd() const { return memory_fd_; }
  // VK_KHR_external_semaphore_fd enabled: timelines are exportable as opaque fds, and imports wait in
  // queue; sync_fd: points also leave and come back as sync files.
  bool semaphore_fd() const { return semaphore_fd_; }
  bool sync_fd() const { return sync_fd_; }
  // Bytes pushed as constants at every launch (the device's limit, at most 4096, a multiple of 4).
  uint32_t push_bytes() const { return push_bytes_; }
  // The most bindings a launch may use on this device.
  uint32_t max_bindings() const { return max_bindings_; }

  // The queue for the next rig device opened here: round robin over the queues the VkDevice was made with
  // (RIG_VULKAN_QUEUES, default 2: context.cpp), so that rig devices get queues of their own while they last.
  Queue &next_queue();

  // The layout for `bindings` storage buffers (made once, kept until the context goes).
  rig_status layout(uint32_t bindings, const Layout **out);

  // A memory type in `bits` that has all of `required`, preferring one with all of `preferred` and none of
  // `avoided`; -1 if none has `required`.
  int memory_type(uint32_t bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
                  VkMemoryPropertyFlags avoided) const;

  // A VkDevice once lost is lost for every rig device on it: the first to see VK_ERROR_DEVICE_LOST marks
  // the context, and the others report their own loss at their next call. Not a copy of a device's loss
  // (each rig Device owns its own, core/device.h): the VkDevice's state, which opening decides on too.
  void set_lost();
  bool lost() const { return lost_.load(std::memory_order_acquire); }

 private:
  Context(Instance &instance, const PhysicalDevice &physical) : instance_(instance), physical_(physical) {}

  Instance &instance_;
  const PhysicalDevice &physical_;
  VkDevice device_ = VK_NULL_HANDLE;
  DeviceFunctions fn_;
  bool host_import_ = false;
  bool push_descriptors_ = false;
  bool memory_fd_ = false;
  bool semaphore_fd_ = false;
  bool sync_fd_ = false;
  uint32_t push_bytes_ = 0;
  uint32_t max_bindings_ = 0;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::atomic<uint32_t> next_queue_{0};
  std::mutex layouts_mutex_;
  std::array<Layout, kMaxBindings + 1> layouts_{};
  std::atomic<bool> lost_{false};
};

}  // namespace rig::vulkan
