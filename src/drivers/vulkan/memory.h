// Buffers: one VkBuffer over one dedicated VkDeviceMemory each. Memory.handle is the VkBuffer,
// Memory.extra the VkDeviceMemory, Memory.host the mapped bytes for host-visible kinds (null for device
// memory). Launches bind buffers by descriptor, not by address: Memory.address is where the memory starts
// in its buffer (0, but for imported host memory, whose buffer starts at the enclosing page).
#pragma once

#include <rig.h>

#include "core/driver.h"
#include "drivers/vulkan/context.h"

namespace rig::vulkan {

// Kinds of memory a buffer can be made of (rig_memory, plus what the driver uses internally).
enum class BufferKind {
  device,       // device-local, never mapped
  host,         // host-visible and coherent, mapped; preferring cached, non-device-local memory
  device_host,  // device-local and host-visible where the device has it, else `host`
};

// A buffer of at least `length` bytes (rounded up to 4, at least 4: fills and bindings work on words),
// usable for storage, copy source and copy destination. RIG_OUT_OF_MEMORY where the device has no room.
rig_status make_buffer(Context &ctx, size_t length, BufferKind kind, Memory *out);
void destroy_buffer(Context &ctx, const Memory &memory) noexcept;

// Imports the host memory enclosing [host, host+length) (the byte at host where length is 0) through VK_EXT_external_memory_host
// (the context must have it enabled), rounded out to the device's import alignment and at least a page:
// a buffer of the borrow's own, which neighbours on those pages import again for themselves (the spec lets
// one payload be imported many times). `address` is where `host` lies in the buffer (buffer_offset).
// RIG_UNMAPPABLE with the reason where the device refuses.
rig_status import_host(Context &ctx, void *host, size_t length, Memory *out);

// Device memory as an opaque fd (VK_KHR_external_memory_fd, enabled: ctx.memory_fd()): a new descriptor
// the caller owns. RIG_UNSUPPORTED for host-visible memory.
rig_status export_fd(Context &ctx, const Memory &memory, int *fd);
// A buffer over an opaque fd of `length` bytes exported by this driver: the memory owns `fd` on success,
// the caller keeps it on failure (RIG_INVALID_ARGUMENT where the driver refuses the descriptor).
rig_status import_fd(Context &ctx, int fd, size_t length, Memory *out);

VkBuffer buffer_of(const Memory &memory);
// Where the memory's first byte lies in buffer_of(memory): 0, but for imported host memory (import_host).
inline VkDeviceSize buffer_offset(const Memory &memory) { return memory.address; }

}  // namespace rig::vulkan
