#include "drivers/vulkan/staging.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "drivers/vulkan/device.h"
#include "drivers/vulkan/memory.h"

namespace rig::vulkan {

Staging::~Staging() {
  const DeviceFunctions &fn = ctx_.fn();
  if (fence_) fn.vkDestroyFence(ctx_.device(), fence_, nullptr);
  if (pool_) fn.vkDestroyCommandPool(ctx_.device(), pool_, nullptr);  // frees commands_
  destroy_buffer(ctx_, buffer_);
}

rig_status Staging::ready() {
  if (fence_) return RIG_OK;
  const DeviceFunctions &fn = ctx_.fn();
  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pi.queueFamilyIndex = ctx_.physical().queue_family;
  VkResult r = fn.vkCreateCommandPool(ctx_.device(), &pi, nullptr, &pool_);
  if (r != VK_SUCCESS) {
    pool_ = VK_NULL_HANDLE;
    return fail(RIG_DRIVER, "Vulkan: vkCreateCommandPool for staging failed: %s", result_name(r));
  }
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  r = fn.vkAllocateCommandBuffers(ctx_.device(), &ai, &commands_);
  if (r != VK_SUCCESS) return fail(RIG_DRIVER, "Vulkan: vkAllocateCommandBuffers for staging failed: %s", result_name(r));
  if (rig_status s = make_buffer(ctx_, kChunk, BufferKind::host, &buffer_); s != RIG_OK) return s;
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  r = fn.vkCreateFence(ctx_.device(), &fi, nullptr, &fence);
  if (r != VK_SUCCESS) return fail(RIG_DRIVER, "Vulkan: vkCreateFence failed: %s", result_name(r));
  fence_ = fence;  // last: ready() is done once fence_ is set
  return RIG_OK;
}

rig_status Staging::run(VulkanDevice &device, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                        VkDeviceSize dst_offset, VkDeviceSize length) {
  const DeviceFunctions &fn = ctx_.fn();
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult r = fn.vkBeginCommandBuffer(commands_, &bi);
  if (r != VK_SUCCESS) return device.lose(r, "vkBeginCommandBuffer (staging) failed");
  // The engine has waited for the work this copy follows; the barrier orders the copy after everything
  // earlier on this queue and makes those writes visible to the transfer.
  VkMemoryBarrier before{};
  before.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  before.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  before.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  fn.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr, 0, nullptr);
  VkBufferCopy region{src_offset, dst_offset, length};
  fn.vkCmdCopyBuffer(commands_, src, dst, 1, &region);
  // And the copy's writes visible to the host (a download) and to later work (an upload).
  VkMemoryBarrier after{};
  after.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  fn.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0,
                          nullptr, 0, nullptr);
  r = fn.vkEndCommandBuffer(commands_);
  if (r != VK_SUCCESS) return device.lose(r, "vkEndCommandBuffer (staging) failed");

  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &commands_;
  {
    std::lock_guard<std::mutex> lock(queue_.submit);
    r = fn.vkQueueSubmit(queue_.handle, 1, &si, fence_);
  }
  if (r != VK_SUCCESS) return device.lose(r, "vkQueueSubmit (staging) failed");
  // Not interruptible: the copy is on the queue and will write its destination; returning before it
  // completes would let that write land after the caller moved on. Slices only to notice a lost device.
  for (;;) {
    r = fn.vkWaitForFences(ctx_.device(), 1, &fence_, VK_TRUE, 100'000'000);
    if (r == VK_SUCCESS) break;
    if (r != VK_TIMEOUT) return device.lose(r, "vkWaitForFences (staging) failed");
    if (ctx_.lost()) return device.lose(VK_ERROR_DEVICE_LOST, "the VkDevice was lost during a staged copy");
  }
  r = fn.vkResetFences(ctx_.device(), 1, &fence_);
  if (r != VK_SUCCESS) return device.lose(r, "vkResetFences (staging) failed");
  return RIG_OK;
}

rig_status Staging::download(VulkanDevice &device, const Memory &memory, size_t offset, void *dst, size_t length) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rig_status s = ready(); s != RIG_OK) return s;
  auto *out = static_cast<char *>(dst);
  for (size_t done = 0; done < length;) {
    size_t n = std::min(kChunk, length - done);
    if (rig_status s = run(device, buffer_of(memory), buffer_offset(memory) + offset + done, buffer_of(buffer_), 0, n); s != RIG_OK) return s;
    std::memcpy(out + done, buffer_.host, n);
    done += n;
  }
  return RIG_OK;
}

rig_status Staging::upload(VulkanDevice &device, const Memory &memory, size_t offset, const void *src, size_t length) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rig_status s = ready(); s != RIG_OK) return s;
  auto *in = static_cast<const char *>(src);
  for (size_t done = 0; done < length;) {
    size_t n = std::min(kChunk, length - done);
    // Host writes made before vkQueueSubmit are visible to the submitted work (coherent memory).
    std::memcpy(buffer_.host, in + done, n);
    if (rig_status s = run(device, buffer_of(buffer_), 0, buffer_of(memory), buffer_offset(memory) + offset + done, n); s != RIG_OK) return s;
    done += n;
  }
  return RIG_OK;
}

}  // namespace rig::vulkan
