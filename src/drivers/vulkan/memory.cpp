#include "drivers/vulkan/memory.h"

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "core/range_table.h"

namespace rig::vulkan {

namespace {

rig_status status_of(VkResult r) {
  return r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? RIG_OUT_OF_MEMORY : RIG_DRIVER;
}

// Creates a buffer of `size` bytes for kBufferUsage, `next` chained to its create info (an external-memory
// struct, or null), and says what memory it needs. Nothing to destroy on failure.
VkResult create_buffer(Context &ctx, VkDeviceSize size, const void *next, VkBuffer *out, VkMemoryRequirements *req) {
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.pNext = next;
  bi.size = size;
  bi.usage = kBufferUsage;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;  // every queue rig uses is of one family
  *out = VK_NULL_HANDLE;
  VkResult r = ctx.fn().vkCreateBuffer(ctx.device(), &bi, nullptr, out);
  if (r == VK_SUCCESS) ctx.fn().vkGetBufferMemoryRequirements(ctx.device(), *out, req);
  return r;
}

// Allocates `size` bytes of memory type `type` (`next` chained to the allocate info: an import, or null)
// and binds it to `buffer`. On failure frees the memory (never the buffer) and names the call in `*call`.
VkResult allocate_bound(Context &ctx, VkBuffer buffer, VkDeviceSize size, int type, const void *next,
                        VkDeviceMemory *out, const char **call) {
  const DeviceFunctions &fn = ctx.fn();
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.pNext = next;
  ai.allocationSize = size;
  ai.memoryTypeIndex = static_cast<uint32_t>(type);
  *out = VK_NULL_HANDLE;
  *call = "vkAllocateMemory";
  VkResult r = fn.vkAllocateMemory(ctx.device(), &ai, nullptr, out);
  if (r != VK_SUCCESS) return r;
  *call = "vkBindBufferMemory";
  r = fn.vkBindBufferMemory(ctx.device(), buffer, *out, 0);
  if (r != VK_SUCCESS) {
    fn.vkFreeMemory(ctx.device(), *out, nullptr);
    *out = VK_NULL_HANDLE;
  }
  return r;
}

// What an opaque fd's buffer and memory chain (VK_KHR_external_memory_fd): the handle type on the buffer,
// and on the memory an export or an import, with a dedicated allocation where the device asks for one.
struct FdChain {
  VkExternalMemoryBufferCreateInfo buffer{};
  VkExportMemoryAllocateInfo exported{};
  VkImportMemoryFdInfoKHR imported{};
  VkMemoryDedicatedAllocateInfo dedicated{};

  explicit FdChain(const Context &ctx) {
    constexpr auto type = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    buffer.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
    buffer.handleTypes = type;
    exported.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO;
    exported.handleTypes = type;
    imported.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR;
    imported.handleType = type;
    dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
    dedicated_only_ = ctx.physical().memory_fd_dedicated;
  }
  // The allocate info's chain for `buffer`: the export (or, with an fd, the import), then dedication.
  const void *memory(VkBuffer b, int fd = -1) {
    dedicated.buffer = b;
    void *head = &exported;
    if (fd >= 0) {
      imported.fd = fd;
      head = &imported;
    }
    static_cast<VkBaseOutStructure *>(head)->pNext =
        dedicated_only_ ? reinterpret_cast<VkBaseOutStructure *>(&dedicated) : nullptr;
    return head;
  }

 private:
  bool dedicated_only_ = false;
};

// Device-local memory not visible to the host (the BAR is small on discrete GPUs), else any type.
int device_type(Context &ctx, uint32_t bits) {
  int type = ctx.memory_type(bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  return type >= 0 ? type : ctx.memory_type(bits, 0, 0, 0);
}

VkDeviceSize words(size_t length) { return length < 4 ? 4 : (length + 3) & ~static_cast<VkDeviceSize>(3); }

// Allocates and binds memory of type `type` for `buffer` (`next` chained: an export, or null), mapping it
// when `map`. Destroys nothing.
rig_status back(Context &ctx, VkBuffer buffer, VkDeviceSize size, int type, bool map, const void *next,
                Memory *out) {
  const DeviceFunctions &fn = ctx.fn();
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const char *call = nullptr;
  VkResult r = allocate_bound(ctx, buffer, size, type, next, &memory, &call);
  if (r != VK_SUCCESS)
    return fail(status_of(r), "Vulkan: %s of %llu bytes (type %d) failed: %s", call,
                static_cast<unsigned long long>(size), type, result_name(r));
  void *host = nullptr;
  if (map) {
    r = fn.vkMapMemory(ctx.device(), memory, 0, VK_WHOLE_SIZE, 0, &host);
    if (r != VK_SUCCESS) {
      fn.vkFreeMemory(ctx.device(), memory, nullptr);
      return fail(status_of(r), "Vulkan: vkMapMemory failed: %s", result_name(r));
    }
  }
  out->host = host;
  out->extra = reinterpret_cast<uintptr_t>(memory);
  return RIG_OK;
}

}  // namespace

VkBuffer buffer_of(const Memory &memory) { return reinterpret_cast<VkBuffer>(memory.handle); }

rig_status make_buffer(Context &ctx, size_t length, BufferKind kind, Memory *out) {
  if (length > SIZE_MAX - 3) return fail(RIG_OUT_OF_MEMORY, "Vulkan: a buffer of %zu bytes cannot exist", length);
  VkDeviceSize size = words(length);
  const DeviceFunctions &fn = ctx.fn();
  // Device memory leaves as an opaque fd where the device can (rig_buffer_export_fd): it must be made so.
  FdChain chain(ctx);
  bool exportable = kind == BufferKind::device && ctx.memory_fd();

  VkBuffer buffer = VK_NULL_HANDLE;
  VkMemoryRequirements req{};
  VkResult r = create_buffer(ctx, size, exportable ? &chain.buffer : nullptr, &buffer, &req);
  if (r != VK_SUCCESS)
    return fail(status_of(r), "Vulkan: vkCreateBuffer of %zu bytes failed: %s", length, result_name(r));

  constexpr VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  constexpr VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  Memory m;
  m.handle = reinterpret_cast<uintptr_t>(buffer);
  m.length = length;
  rig_status s = RIG_OK;
  if (kind == BufferKind::device) {
    int type = device_type(ctx, req.memoryTypeBits);
    s = type < 0 ? fail(RIG_OUT_OF_MEMORY, "Vulkan: no memory type for a device buffer")
                 : back(ctx, buffer, req.size, type, false, exportable ? chain.memory(buffer) : nullptr, &m);
  } else {
    s = RIG_OUT_OF_MEMORY;
    if (kind == BufferKind::device_host) {
      int type = ctx.memory_type(req.memoryTypeBits, local | visible, 0, 0);
      // Device-local host-visible heaps can be small (a 256 MiB BAR): fall back to host memory when full.
      if (type >= 0) s = back(ctx, buffer, req.size, type, true, nullptr, &m);
    }
    if (s != RIG_OK) {
      int type = ctx.memory_type(req.memoryTypeBits, visible, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, local);
      s = type < 0 ? fail(RIG_OUT_OF_MEMORY, "Vulkan: no host-visible coherent memory type")
                   : back(ctx, buffer, req.size, type, true, nullptr, &m);
    }
  }
  if (s != RIG_OK) {
    fn.vkDestroyBuffer(ctx.device(), buffer, nullptr);
    return s;
  }
  *out = m;
  return RIG_OK;
}

void destroy_buffer(Context &ctx, const Memory &memory) noexcept {
  if (!memory.handle) return;
  ctx.fn().vkDestroyBuffer(ctx.device(), buffer_of(memory), nullptr);
  // Freeing memory unmaps it.
  ctx.fn().vkFreeMemory(ctx.device(), reinterpret_cast<VkDeviceMemory>(memory.extra), nullptr);
}

namespace {

// Imports [host, host+length), both multiples of the device's import alignment, as one buffer over it.
rig_status import_aligned(Context &ctx, void *host, size_t length, Memory *out) {
  const DeviceFunctions &fn = ctx.fn();
  ctx.instance().count_host_import();
  constexpr auto handle_type = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  VkMemoryHostPointerPropertiesEXT hp{};
  hp.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT;
  VkResult r = fn.vkGetMemoryHostPointerPropertiesEXT(ctx.device(), handle_type, host, &hp);
  if (r != VK_SUCCESS || hp.memoryTypeBits == 0)
    return fail(RIG_UNMAPPABLE, "Vulkan: the device cannot import host memory at %p: %s", host, result_name(r));

  VkExternalMemoryBufferCreateInfo ext{};
  ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
  ext.handleTypes = handle_type;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkMemoryRequirements req{};
  r = create_buffer(ctx, length, &ext, &buffer, &req);
  if (r != VK_SUCCESS) return fail(RIG_UNMAPPABLE, "Vulkan: vkCreateBuffer for an import failed: %s", result_name(r));
  int type = ctx.memory_type(req.memoryTypeBits & hp.memoryTypeBits, 0, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
  if (type < 0 || req.size > length) {
    fn.vkDestroyBuffer(ctx.device(), buffer, nullptr);
    return fail(RIG_UNMAPPABLE, "Vulkan: no memory type can hold a buffer over imported host memory");
  }
  VkImportMemoryHostPointerInfoEXT imp{};
  imp.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT;
  imp.handleType = handle_type;
  imp.pHostPointer = host;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const char *call = nullptr;
  r = allocate_bound(ctx, buffer, length, type, &imp, &memory, &call);
  if (r != VK_SUCCESS) {
    fn.vkDestroyBuffer(ctx.device(), buffer, nullptr);
    return fail(RIG_UNMAPPABLE, "Vulkan: importing host memory at %p failed (%s): %s", host, call, result_name(r));
  }
  Memory m;
  m.host = host;
  m.handle = reinterpret_cast<uintptr_t>(buffer);
  m.extra = reinterpret_cast<uintptr_t>(memory);
  m.length = length;
  *out = m;
  return RIG_OK;
}

}  // namespace

rig_status import_host(Context &ctx, void *host, size_t length, Memory *out) {
  // The import covers the enclosing units of the device's import alignment (at least a page): each borrow
  // its own import, so a buffer covers every byte of it whatever its neighbours on those pages.
  const size_t page = range_table::page_size();
  const VkDeviceSize align = std::max<VkDeviceSize>(ctx.physical().host_import_alignment, page);
  const uintptr_t at = reinterpret_cast<uintptr_t>(host);
  const size_t covered = length ? length : 1;  // an empty borrow: the unit holding `host`
  if ((align & (align - 1)) != 0 || at > UINTPTR_MAX - covered - align)
    return fail(RIG_UNMAPPABLE, "Vulkan: host memory at %p of %zu bytes cannot be imported with the device's "
                "import alignment %llu (VK_EXT_external_memory_host)", host, length,
                static_cast<unsigned long long>(ctx.physical().host_import_alignment));
  const uintptr_t base = at & ~static_cast<uintptr_t>(align - 1);
  const size_t span = static_cast<size_t>(((at + covered + align - 1) & ~static_cast<uintptr_t>(align - 1)) - base);
  Memory m;
  if (rig_status s = import_aligned(ctx, reinterpret_cast<void *>(base), span, &m); s != RIG_OK) return s;
  m.host = host;
  m.address = at - base;
  m.length = length;
  *out = m;
  return RIG_OK;
}

rig_status export_fd(Context &ctx, const Memory &memory, int *fd) {
  if (memory.host)
    return fail(RIG_UNSUPPORTED, "Vulkan: only device memory (RIG_MEMORY_DEVICE) leaves as a descriptor, not "
                "host-visible memory");
  VkMemoryGetFdInfoKHR gi{};
  gi.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
  gi.memory = reinterpret_cast<VkDeviceMemory>(memory.extra);
  gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkResult r = ctx.fn().vkGetMemoryFdKHR(ctx.device(), &gi, fd);
  if (r != VK_SUCCESS) return fail(status_of(r), "Vulkan: vkGetMemoryFdKHR failed: %s", result_name(r));
  return RIG_OK;
}

rig_status import_fd(Context &ctx, int fd, size_t length, Memory *out) {
  if (length > SIZE_MAX - 3) return fail(RIG_INVALID_ARGUMENT, "Vulkan: a buffer of %zu bytes cannot exist", length);
  const DeviceFunctions &fn = ctx.fn();
  FdChain chain(ctx);
  VkBuffer buffer = VK_NULL_HANDLE;
  VkMemoryRequirements req{};
  VkResult r = create_buffer(ctx, words(length), &chain.buffer, &buffer, &req);
  if (r != VK_SUCCESS)
    return fail(status_of(r), "Vulkan: vkCreateBuffer for an imported descriptor failed: %s", result_name(r));
  // The exporter's type and size, as the same driver chooses them for a buffer of the same length.
  int type = device_type(ctx, req.memoryTypeBits);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const char *call = nullptr;
  r = type < 0 ? VK_ERROR_OUT_OF_DEVICE_MEMORY
               : allocate_bound(ctx, buffer, req.size, type, chain.memory(buffer, fd), &memory, &call);
  if (r != VK_SUCCESS) {
    fn.vkDestroyBuffer(ctx.device(), buffer, nullptr);
    return fail(r == VK_ERROR_INVALID_EXTERNAL_HANDLE ? RIG_INVALID_ARGUMENT : status_of(r),
                "Vulkan: importing a descriptor as %zu bytes failed (%s): %s (not an opaque memory descriptor of "
                "this device's driver, or of another length?)", length, call ? call : "no memory type",
                result_name(r));
  }
  Memory m;
  m.handle = reinterpret_cast<uintptr_t>(buffer);
  m.extra = reinterpret_cast<uintptr_t>(memory);
  m.length = length;
  *out = m;
  return RIG_OK;
}

}  // namespace rig::vulkan
