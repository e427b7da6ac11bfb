// A Vulkan device's memory (DriverDevice's memory calls): buffers, borrows of host memory and of another
// device's buffers, and host-synchronous copies through the staging buffer.
#include "drivers/vulkan/device.h"

#include <cstring>

#include "core/error.h"
#include "drivers/vulkan/instance.h"
#include "drivers/vulkan/memory.h"

namespace rig::vulkan {

rig_status VulkanDevice::allocate(size_t length, rig_memory kind, Memory *out) {
  if (kind == kMemoryDeviceReused) kind = RIG_MEMORY_DEVICE;  // no pool of rig's here: plain device memory
  switch (kind) {
    case RIG_MEMORY_DEVICE:
      return make_buffer(*ctx_, length, BufferKind::device, out);
    case RIG_MEMORY_PINNED:
      return make_buffer(*ctx_, length, BufferKind::host, out);
    case RIG_MEMORY_MAPPED:
      return make_buffer(*ctx_, length, BufferKind::device_host, out);
    default:
      break;
  }
  return fail(RIG_INVALID_ARGUMENT, "Vulkan: unknown memory kind %d", static_cast<int>(kind));
}

void VulkanDevice::free(const Memory &memory) noexcept { destroy_buffer(*ctx_, memory); }

rig_status VulkanDevice::map_host(void *host, size_t length, bool read_only, Memory *out) {
  if (!ctx_->host_import()) {
    if (!env_flag("RIG_VULKAN_HOST_IMPORT"))
      return fail(RIG_UNMAPPABLE,
                  "Vulkan: %s borrows no host memory (importing host memory is opt-in: RIG_VULKAN_HOST_IMPORT=1)",
                  info_.name.c_str());
    return fail(RIG_UNMAPPABLE, "Vulkan: %s does not offer VK_EXT_external_memory_host (or it was not enabled "
                "when the first Vulkan device was opened)", info_.name.c_str());
  }
  if (read_only)
    return fail(RIG_UNMAPPABLE, "Vulkan: read-only host memory is never imported: an import cannot be made "
                "read-only, so a device write would fault");
  Memory m;
  if (rig_status s = import_host(*ctx_, host, length, &m); s != RIG_OK) return s;
  std::lock_guard<std::mutex> lock(imports_mutex_);
  imports_.push_back(m);
  *out = m;
  return RIG_OK;
}

rig_status VulkanDevice::map_peer(DriverDevice &owner, const Memory &memory, Memory *out) {
  auto *peer = dynamic_cast<VulkanDevice *>(&owner);
  if (!peer || &peer->context() != ctx_.get())
    return fail(RIG_UNMAPPABLE, "Vulkan: %s maps only memory of rig devices on the same Vulkan device, not %s's",
                info_.name.c_str(), owner.info().name.c_str());
  *out = memory;  // the same VkBuffer serves every rig device of one VkDevice
  return RIG_OK;
}

void VulkanDevice::unmap(const Memory &mapping) noexcept {
  std::lock_guard<std::mutex> lock(imports_mutex_);
  for (auto it = imports_.begin(); it != imports_.end(); ++it)
    if (it->handle == mapping.handle) {
      destroy_buffer(*ctx_, *it);
      imports_.erase(it);
      return;
    }
  // A peer mapping: the owner's buffer, nothing of ours to release.
}

rig_status VulkanDevice::copy_to_host(const Memory &memory, size_t offset, void *dst, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {
    std::memcpy(dst, static_cast<const char *>(memory.host) + offset, length);
    return RIG_OK;
  }
  if (lost()) return lost_status();
  return staging_.download(*this, memory, offset, dst, length);
}

rig_status VulkanDevice::copy_from_host(const Memory &memory, size_t offset, const void *src, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {
    std::memcpy(static_cast<char *>(memory.host) + offset, src, length);
    return RIG_OK;
  }
  if (lost()) return lost_status();
  return staging_.upload(*this, memory, offset, src, length);
}

rig_status VulkanDevice::export_memory_fd(const Memory &memory, int *fd) {
  if (lost()) return lost_status();
  return export_fd(*ctx_, memory, fd);
}

rig_status VulkanDevice::import_memory_fd(int fd, size_t length, Memory *out) {
  if (lost()) return lost_status();
  return import_fd(*ctx_, fd, length, out);
}

}  // namespace rig::vulkan
