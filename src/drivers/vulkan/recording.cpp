// Recording a value's parts into a batch's command buffer: the barrier before each part, copies (overlapping
// ones through a scratch buffer) and fills of any offset and length. Launches are in descriptors.cpp.
#include "drivers/vulkan/device.h"

#include <algorithm>

#include <cstring>

#include "core/error.h"
#include "drivers/vulkan/memory.h"

namespace rig::vulkan {

void VulkanDevice::barrier(VkCommandBuffer commands, bool to_host) const {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = to_host ? VK_ACCESS_HOST_READ_BIT
                             : VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                                   VK_ACCESS_SHADER_WRITE_BIT;
  ctx_->fn().vkCmdPipelineBarrier(commands, kWorkStages, to_host ? VkPipelineStageFlags{VK_PIPELINE_STAGE_HOST_BIT} : kWorkStages, 0, 1,
                                  &mb, 0, nullptr, 0, nullptr);
}

rig_status VulkanDevice::spoil(const Batch &batch, VkResult result, const char *why) {
  if (batch.ahead) return RIG_DRIVER;  // a record refused: no message, since the run's set call succeeds
  return lose(result, why);
}

rig_status VulkanDevice::record_part(Batch &batch, const Part &part, const Work &work) {
  // A full barrier before every part: parts run in order (and the first one after all earlier work on this
  // queue, which is rule 1 across batches).
  barrier(batch.commands, false);
  switch (part.kind) {
    case RIG_PART_COPY:
      batch.writes_host_visible |= work.slots[part.dst_slot].memory->host != nullptr;
      return record_copy(batch, part, work);
    case RIG_PART_FILL:
      batch.writes_host_visible |= work.slots[part.dst_slot].memory->host != nullptr;
      return record_fill(batch, part, work);
    case RIG_PART_LAUNCH:
      for (uint32_t slot : part.slots)
        if (work.slots[slot].access & RIG_ACCESS_WRITE)
          batch.writes_host_visible |= work.slots[slot].memory->host != nullptr;
      return record_launch(batch, part, work);
    default:
      return spoil(batch, VK_ERROR_UNKNOWN, "a part the device cannot run reached hand_over");
  }
}

rig_status VulkanDevice::record_copy(Batch &batch, const Part &part, const Work &work) {
  const Binding &s = work.slots[part.src_slot];
  const Binding &d = work.slots[part.dst_slot];
  size_t length = part.length == RIG_WHOLE ? s.length - part.src_offset : part.length;
  if (length == 0) return RIG_OK;
  VkBuffer sb = buffer_of(*s.memory), db = buffer_of(*d.memory);
  VkDeviceSize so = buffer_offset(*s.memory) + s.offset + part.src_offset;
  VkDeviceSize dof = buffer_offset(*d.memory) + d.offset + part.dst_offset;
  const DeviceFunctions &fn = ctx_->fn();
  if (sb == db && so < dof + length && dof < so + length) {
    if (so == dof) return RIG_OK;
    // Overlapping ranges of one buffer (two views of one allocation): vkCmdCopyBuffer forbids it, so copy
    // through a scratch buffer freed when the batch is reused, which gives memmove's result.
    Memory scratch;
    if (rig_status st = make_buffer(*ctx_, length, BufferKind::device, &scratch); st != RIG_OK)
      return spoil(batch, VK_ERROR_OUT_OF_DEVICE_MEMORY, "no memory for an overlapping copy's scratch buffer");
    batch.scratch.push_back(scratch);
    VkBufferCopy in{so, 0, length}, back{0, dof, length};
    fn.vkCmdCopyBuffer(batch.commands, sb, buffer_of(scratch), 1, &in);
    barrier(batch.commands, false);
    fn.vkCmdCopyBuffer(batch.commands, buffer_of(scratch), db, 1, &back);
    return RIG_OK;
  }
  VkBufferCopy region{so, dof, length};
  fn.vkCmdCopyBuffer(batch.commands, sb, db, 1, &region);
  return RIG_OK;
}

rig_status VulkanDevice::record_fill(Batch &batch, const Part &part, const Work &work) {
  const Binding &d = work.slots[part.dst_slot];
  size_t length = part.length == RIG_WHOLE ? d.length - part.dst_offset : part.length;
  if (length == 0) return RIG_OK;
  VkBuffer db = buffer_of(*d.memory);
  VkDeviceSize at = buffer_offset(*d.memory) + d.offset + part.dst_offset;
  const DeviceFunctions &fn = ctx_->fn();
  // vkCmdFillBuffer needs a 4-byte aligned offset and size: fill the aligned middle with it and copy the
  // unaligned head and tail (at most 3 bytes each) from the pattern of `byte`.
  VkDeviceSize head = std::min<VkDeviceSize>((4 - at % 4) % 4, length);
  VkDeviceSize middle = (length - head) & ~static_cast<VkDeviceSize>(3);
  VkDeviceSize tail = length - head - middle;
  VkDeviceSize pattern = 4 * static_cast<VkDeviceSize>(part.byte);
  if (head) {
    VkBufferCopy r{pattern, at, head};
    fn.vkCmdCopyBuffer(batch.commands, buffer_of(patterns_), db, 1, &r);
  }
  if (middle) fn.vkCmdFillBuffer(batch.commands, db, at + head, middle, 0x01010101u * part.byte);
  if (tail) {
    VkBufferCopy r{pattern, at + head + middle, tail};
    fn.vkCmdCopyBuffer(batch.commands, buffer_of(patterns_), db, 1, &r);
  }
  return RIG_OK;
}

}  // namespace rig::vulkan
