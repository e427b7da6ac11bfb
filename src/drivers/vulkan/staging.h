// Host-synchronous copies between host bytes and device memory the host does not address, through a
// host-visible staging buffer in chunks (used by rig_buffer_read/write after the engine's waits).
#pragma once

#include <rig.h>

#include <cstddef>
#include <mutex>

#include "core/driver.h"
#include "drivers/vulkan/context.h"

namespace rig::vulkan {

class VulkanDevice;

class Staging {
 public:
  // Bytes staged per round trip. The buffer is made at the first staged copy and kept.
  static constexpr size_t kChunk = size_t{4} << 20;

  Staging(Context &ctx, Queue &queue) : ctx_(ctx), queue_(queue) {}
  ~Staging();
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;

  // Copies device bytes [offset, offset+length) of `memory` to `dst`, or `src` into them. Blocks until the
  // copy is complete (a copy is never abandoned half-way: its destination must not change after return).
  // A device loss is reported through `device` and answered RIG_LOST.
  rig_status download(VulkanDevice &device, const Memory &memory, size_t offset, void *dst, size_t length);
  rig_status upload(VulkanDevice &device, const Memory &memory, size_t offset, const void *src, size_t length);

 private:
  rig_status ready();
  // Copies `length` bytes on the device and waits for the copy, holding mutex_.
  rig_status run(VulkanDevice &device, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                 VkDeviceSize dst_offset, VkDeviceSize length);

  Context &ctx_;
  Queue &queue_;
  std::mutex mutex_;  // one staged copy at a time per device: they share the buffer and command buffer
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  Memory buffer_;
};

}  // namespace rig::vulkan
