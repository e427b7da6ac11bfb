// A Vulkan device's memory (DriverDevice's memory calls): buffers, borrows of host memory and of another
// device's buffers, and host-synchronous copies through the staging buffer.
#include "drivers/vulkan/device.h"

#include <cstring>
#include <string>

#include "core/error.h"
#include "drivers/vulkan/host_pages.h"
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
    if (host_import_turned_off())
      return fail(RIG_UNMAPPABLE, "Vulkan: %s borrows no host memory: importing it is turned off "
                  "(RIG_VULKAN_HOST_IMPORT=0)", info_.name.c_str());
    return fail(RIG_UNMAPPABLE, "Vulkan: %s does not offer VK_EXT_external_memory_host, so it borrows no host "
                "memory", info_.name.c_str());
  }
  // An import cannot be made read-only, but rig never lets work write through a read-only borrow: such a
  // borrow is imported even over pages the process cannot write (where the driver takes them); a writable
  // borrow needs writable pages.
  // An empty borrow still gets a buffer (a launch binds every slot): that of the page at `host`.
  std::string refusal = host_pages_refusal(host, length ? length : 1, read_only);
  if (!refusal.empty())
    return fail(RIG_UNMAPPABLE, "Vulkan: %s does not import host memory at %p of %zu bytes: %s",
                info_.name.c_str(), host, length, refusal.c_str());
  Memory m;
  if (rig_status s = import_host(*ctx_, host, length, &m); s != RIG_OK) return s;
  std::lock_guard<std::mutex> lock(imports_mutex_);
  imports_.emplace(m.handle, m);
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
  auto it = imports_.find(mapping.handle);
  if (it == imports_.end()) return;  // a peer mapping or an empty borrow: nothing of ours to release
  destroy_buffer(*ctx_, it->second);
  imports_.erase(it);
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
