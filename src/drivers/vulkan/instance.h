// The process's one VkInstance and the physical devices rig offers as "vulkan:N".
//
// Made at the first list or open and kept until the process exits (never destroyed: rig devices are never
// freed before exit either, and destroying an instance under live VkDevices is invalid).
//
// Environment, read once when the instance is made:
//   RIG_VULKAN_LIBRARY=path     load this library instead of libvulkan.so.1 (tests, other loaders)
//   RIG_VULKAN_VALIDATION=1     enable VK_LAYER_KHRONOS_validation where installed (with synchronization
//                               validation where the layer offers VK_EXT_validation_features), a debug-utils
//                               messenger that prints and counts every warning and error; when the process
//                               exits having counted any, it exits with status 3 (so every test binary
//                               run this way fails on a validation message)
//   RIG_VULKAN_NO_PUSH_DESCRIPTORS=1  bind launch slots through descriptor pools even where the device
//                               offers VK_KHR_push_descriptor (so the tests run both paths)
//   RIG_VULKAN_HOST_IMPORT=0    leave VK_EXT_external_memory_host off, so that no borrow of host memory
//                               is imported (on by default where the device offers it: device.h, map_host)
#pragma once

#include <rig.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "drivers/vulkan/api.h"

namespace rig::vulkan {

// A physical device rig can use: Vulkan 1.2 or later, timeline semaphores, a queue family with compute.
struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t queue_family = 0;
  uint32_t queue_count = 0;             // queues that family offers (a context creates a few: context.cpp)
  bool has_host_import = false;         // VK_EXT_external_memory_host offered
  bool has_push_descriptor = false;     // VK_KHR_push_descriptor offered
  // VK_KHR_external_memory_fd offered, and rig's buffers can be exported and imported as opaque fds
  // (vkGetPhysicalDeviceExternalBufferProperties); dedicated: only with a dedicated allocation.
  bool has_memory_fd = false;
  bool memory_fd_dedicated = false;
  // VK_KHR_external_semaphore_fd offered, and (vkGetPhysicalDeviceExternalSemaphoreProperties) a timeline
  // semaphore both leaves and comes back as an opaque fd; sync: a binary one as a sync file.
  bool has_semaphore_fd = false;
  bool has_sync_fd = false;
  uint32_t max_push_descriptors = 0;
  VkDeviceSize host_import_alignment = 0;
  std::string name;                     // "vulkan:N"
};

class Instance {
 public:
  // The instance, made on the first call. Null (with rig::fail's message set) where Vulkan cannot be
  // loaded or the instance cannot be made; the failure is remembered and repeated.
  static Instance *get();

  const Library &lib() const { return lib_; }
  VkInstance handle() const { return instance_; }
  std::span<const PhysicalDevice> devices() const { return devices_; }
  bool host_import_wanted() const { return host_import_; }

  // Validation (RIG_VULKAN_VALIDATION=1): whether the layer is active, and the messages counted so far.
  bool validation_active() const { return validation_active_; }
  uint64_t validation_messages() const { return validation_messages_.load(std::memory_order_relaxed); }
  void count_validation_message() { validation_messages_.fetch_add(1, std::memory_order_relaxed); }
  // Takes back messages a test provoked on purpose (testing.cpp).
  void forgive_validation_messages(uint64_t n) { validation_messages_.fetch_sub(n, std::memory_order_relaxed); }
  // Host-memory imports attempted (each a registration of host memory with the driver), for the tests that
  // prove no path but an opted-in borrow ever registers.
  uint64_t host_imports() const { return host_imports_.load(std::memory_order_relaxed); }
  void count_host_import() { host_imports_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Instance() = default;
  rig_status make();
  rig_status discover();

  Library lib_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<PhysicalDevice> devices_;
  bool host_import_ = false;
  bool validation_active_ = false;
  std::atomic<uint64_t> validation_messages_{0};
  std::atomic<uint64_t> host_imports_{0};
};

// True where the environment variable is set to something other than "" or "0".
bool env_flag(const char *name);
// RIG_VULKAN_HOST_IMPORT=0: host memory is never imported.
bool host_import_turned_off();

}  // namespace rig::vulkan
