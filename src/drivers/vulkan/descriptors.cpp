// Launches: a descriptor set per launch from the batch's descriptor pools (reset when the batch is reused),
// or push descriptors where the device has them, and the dispatch.
#include "drivers/vulkan/device.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/error.h"
#include "drivers/vulkan/memory.h"

namespace rig::vulkan {

namespace {

constexpr uint32_t kPoolSets = 64;                    // descriptor sets per descriptor pool
constexpr uint32_t kPoolDescriptors = kPoolSets * 8;  // storage-buffer descriptors per descriptor pool

}  // namespace

rig_status VulkanDevice::descriptor_set(Batch &batch, const Layout &layout, uint32_t bindings, VkDescriptorSet *out) {
  const DeviceFunctions &fn = ctx_->fn();
  for (;;) {
    if (batch.pool_cursor == batch.pools.size()) {
      // A batch's pools serve many launches and are reset for reuse; a run recorded ahead keeps its set for
      // its life, so its pool holds just that set (a program may keep thousands of runs).
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, batch.ahead ? std::max(bindings, 1u) : kPoolDescriptors};
      VkDescriptorPoolCreateInfo pi{};
      pi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
      pi.maxSets = batch.ahead ? 1 : kPoolSets;
      pi.poolSizeCount = 1;
      pi.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      VkResult r = fn.vkCreateDescriptorPool(ctx_->device(), &pi, nullptr, &pool);
      if (r != VK_SUCCESS) return spoil(batch, r, "vkCreateDescriptorPool failed");
      batch.pools.push_back(pool);
    }
    VkDescriptorSetAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    ai.descriptorPool = batch.pools[batch.pool_cursor];
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout.set;
    VkResult r = fn.vkAllocateDescriptorSets(ctx_->device(), &ai, out);
    if (r == VK_SUCCESS) return RIG_OK;
    if ((r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) || bindings > kPoolDescriptors)
      return spoil(batch, r, "vkAllocateDescriptorSets failed");
    ++batch.pool_cursor;  // this pool is full: the next one (made above if need be)
  }
}

rig_status VulkanDevice::record_launch(Batch &batch, const Part &part, const Work &work) {
  auto *module = dynamic_cast<Module *>(part.module);
  Entry *entry = module ? module->entry(part.function) : nullptr;
  if (!entry) return spoil(batch, VK_ERROR_UNKNOWN, "a launch of a function that is not of a Vulkan module");
  const uint32_t n = static_cast<uint32_t>(part.slots.size());
  uint32_t block[3] = {part.block[0] ? part.block[0] : 1, part.block[1] ? part.block[1] : 1,
                       part.block[2] ? part.block[2] : 1};
  std::shared_ptr<const Pipeline> pipeline;
  if (rig_status s = entry->pipeline(n, block, &pipeline); s != RIG_OK)
    return spoil(batch, VK_ERROR_UNKNOWN, "a launch's pipeline could not be made");
  const DeviceFunctions &fn = ctx_->fn();
  const Layout &layout = pipeline->layout();
  // Slots that start off the device's storage-buffer alignment (views at odd offsets) are copied into
  // scratch buffers for the launch, and copied back after it where the launch may write them.
  const VkDeviceSize align = ctx_->limits().minStorageBufferOffsetAlignment;
  std::array<VkBuffer, Context::kMaxBindings> staged{};
  bool any_staged = false;
  for (uint32_t i = 0; i < n; ++i) {
    const Binding &b = work.slots[part.slots[i]];
    if (b.length == 0 || (buffer_offset(*b.memory) + b.offset) % align == 0) continue;
    Memory scratch;
    if (make_buffer(*ctx_, b.length, BufferKind::device, &scratch) != RIG_OK)
      return spoil(batch, VK_ERROR_OUT_OF_DEVICE_MEMORY, "no memory for a scratch copy of an unaligned launch slot");
    batch.scratch.push_back(scratch);
    staged[i] = buffer_of(scratch);
    VkBufferCopy in{buffer_offset(*b.memory) + b.offset, 0, b.length};
    fn.vkCmdCopyBuffer(batch.commands, buffer_of(*b.memory), staged[i], 1, &in);
    any_staged = true;
  }
  if (any_staged) barrier(batch.commands, false);
  if (n > 0) {
    std::array<VkDescriptorBufferInfo, Context::kMaxBindings> infos{};
    for (uint32_t i = 0; i < n; ++i) {
      const Binding &b = work.slots[part.slots[i]];
      infos[i].buffer = buffer_of(*b.memory);
      if (staged[i]) {
        infos[i].buffer = staged[i];
        infos[i].offset = 0;
        infos[i].range = b.length;
      } else if (b.length > 0) {
        infos[i].offset = buffer_offset(*b.memory) + b.offset;
        infos[i].range = b.length;
      } else {
        infos[i].offset = 0;  // an empty slot: a range cannot be empty (module.h says the shader must not touch it)
        infos[i].range = 4;
      }
    }
    VkWriteDescriptorSet w{};
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstBinding = 0;
    w.descriptorCount = n;  // consecutive bindings 0..n-1, all storage buffers of one descriptor each
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = infos.data();
    if (ctx_->push_descriptors()) {
      fn.vkCmdPushDescriptorSetKHR(batch.commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout.pipeline, 0, 1, &w);
    } else {
      VkDescriptorSet set = VK_NULL_HANDLE;
      if (rig_status s = descriptor_set(batch, layout, n, &set); s != RIG_OK) return s;
      w.dstSet = set;
      fn.vkUpdateDescriptorSets(ctx_->device(), 1, &w, 0, nullptr);
      fn.vkCmdBindDescriptorSets(batch.commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout.pipeline, 0, 1, &set, 0,
                                 nullptr);
    }
  }
  fn.vkCmdBindPipeline(batch.commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline->handle());
  if (uint32_t push = ctx_->push_bytes()) {
    // The whole range every time, zero-padded: a shader's push block then never reads unset bytes.
    alignas(16) std::array<std::byte, 4096> bytes;
    size_t given = std::min<size_t>(work.scalars.size(), push);
    if (given) std::memcpy(bytes.data(), work.scalars.data(), given);
    std::memset(bytes.data() + given, 0, push - given);
    fn.vkCmdPushConstants(batch.commands, layout.pipeline, VK_SHADER_STAGE_COMPUTE_BIT, 0, push, bytes.data());
  }
  fn.vkCmdDispatch(batch.commands, part.grid[0], part.grid[1], part.grid[2]);
  batch.pipelines.push_back(std::move(pipeline));
  if (any_staged) {
    barrier(batch.commands, false);
    for (uint32_t i = 0; i < n; ++i) {
      const Binding &b = work.slots[part.slots[i]];
      if (!staged[i] || !(b.access & RIG_ACCESS_WRITE)) continue;
      VkBufferCopy back{0, buffer_offset(*b.memory) + b.offset, b.length};
      fn.vkCmdCopyBuffer(batch.commands, staged[i], buffer_of(*b.memory), 1, &back);
    }
  }
  return RIG_OK;
}

}  // namespace rig::vulkan
