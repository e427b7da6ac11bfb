// Buffers as file descriptors (Vulkan's opaque memory fds): a device's memory leaves as a descriptor the
// caller sends anywhere (SCM_RIGHTS, a fork), and comes back as a buffer with stamps of its own.
#include "core/error.h"
#include "interop/operations.h"

namespace rig::interop {
namespace {

MemoryFds *fds_of(Device &d, const char *call) {
  MemoryFds *m = d.driver().memory_fds();
  if (!m || !m->can_memory_fd()) {
    fail(RIG_UNSUPPORTED, "%s: %s (%s) has no memory descriptors (Vulkan's VK_KHR_external_memory_fd with opaque "
         "fds for buffers)", call, d.info().name.c_str(), d.info().framework.c_str());
    return nullptr;
  }
  return m;
}

}  // namespace

rig_status export_memory_fd(const Buffer &buffer, int *fd, size_t *length) {
  const char *call = "buffer_export_fd";
  Device &owner = buffer.allocation->owner();
  MemoryFds *m = fds_of(owner, call);
  if (!m) return RIG_UNSUPPORTED;
  // A descriptor carries a whole allocation: a view's range, or a part's, would be lost on the way.
  if (buffer.allocation->is_part())
    return fail(RIG_INVALID_ARGUMENT, "%s: the buffer's memory is part of an allocation shared with other buffers "
                "(a loaded tensor): copy it into a buffer of rig_buffer_create to export it", call);
  if (buffer.offset != 0 || buffer.length != buffer.allocation->length())
    return fail(RIG_INVALID_ARGUMENT, "%s: the buffer is a view (%zu bytes at %zu of %zu): export the allocation's "
                "whole buffer, and make the view on the importing side", call, buffer.length, buffer.offset,
                buffer.allocation->length());
  if (rig_status s = check_open(owner, call); s != RIG_OK) return s;
  if (rig_status s = m->export_memory_fd(buffer.allocation->base(), fd); s != RIG_OK) return s;
  *length = buffer.length;
  return RIG_OK;
}

rig_status import_memory_fd(Device &device, int fd, size_t length, std::shared_ptr<Buffer> *out) {
  const char *call = "buffer_import_fd";
  MemoryFds *m = fds_of(device, call);
  if (!m) return RIG_UNSUPPORTED;
  if (length == 0) return fail(RIG_INVALID_ARGUMENT, "%s: a length of 0 (the exporter's length goes with the fd)", call);
  if (rig_status s = check_open(device, call); s != RIG_OK) return s;
  int mine = -1;
  if (rig_status s = duplicate_for_driver(fd, call, "memory", &mine); s != RIG_OK) return s;
  Memory mem;
  if (rig_status s = m->import_memory_fd(mine, length, &mem); s != RIG_OK) {
    drop_refused(mine);
    return s;
  }
  // Owned: the driver frees the imported memory once every use is reached (rule 6).
  *out = buffer_over(device, std::make_shared<Allocation>(device, mem, length, false, true));
  return RIG_OK;
}

}  // namespace rig::interop
