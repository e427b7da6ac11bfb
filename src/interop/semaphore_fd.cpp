// Points as file descriptors of Vulkan semaphores: a point leaves as its device's timeline semaphore (an
// opaque fd) with the value to wait for, or as a sync file; a descriptor comes back as a point of a device
// whose queue waits for it (core's hand_over_empty, as for native events). Only drivers with SemaphoreFds
// (Vulkan with VK_KHR_external_semaphore_fd) take part; every other device answers RIG_UNSUPPORTED with the reason.
#include "core/error.h"
#include "core/registry.h"
#include "core/submit.h"
#include "interop/operations.h"

namespace rig::interop {
namespace {

// The device's semaphore descriptors of the kind asked (`sync`: sync files), or null with RIG_UNSUPPORTED's
// message naming what is missing.
SemaphoreFds *fds_of(Device &d, bool sync, const char *call) {
  SemaphoreFds *f = d.driver().semaphore_fds();
  if (f && (sync ? f->can_sync_fd() : f->can_semaphore_fd())) return f;
  if (sync)
    fail(RIG_UNSUPPORTED, "%s: %s (%s) has no sync files (Vulkan's VK_KHR_external_semaphore_fd with "
         "VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT for binary semaphores)", call, d.info().name.c_str(),
         d.info().framework.c_str());
  else
    fail(RIG_UNSUPPORTED, "%s: %s (%s) has no semaphore descriptors (Vulkan's VK_KHR_external_semaphore_fd with "
         "opaque fds of timeline semaphores, opt-in: RIG_VULKAN_SEMAPHORE_FD=1 before the device opens)", call,
         d.info().name.c_str(), d.info().framework.c_str());
  return nullptr;
}

// The device of a point to export and its descriptors, the point committed (a queue must never wait on
// held work): exported_device's and commit_for_export's statuses, RIG_UNSUPPORTED for a device without them.
rig_status exporting(uint64_t point, bool sync, const char *call, SemaphoreFds **fds) {
  Device *p = nullptr;
  if (rig_status s = exported_device(point, call, &p); s != RIG_OK) return s;
  SemaphoreFds *f = fds_of(*p, sync, call);
  if (!f) return RIG_UNSUPPORTED;
  bool reached = false;
  if (rig_status s = commit_for_export(*p, point_value(point), &reached); s != RIG_OK) return s;
  *fds = f;
  return RIG_OK;
}

// The import both kinds share: checks, a duplicate for the driver, and `device`'s next value after its
// queue waits for the descriptor (`wait` gets the duplicate).
template <class Wait>
rig_status import_point(Device &device, int fd, bool sync, const char *call, uint64_t *point, Wait wait) {
  SemaphoreFds *f = fds_of(device, sync, call);
  if (!f) return RIG_UNSUPPORTED;
  if (rig_status s = check_open(device, call); s != RIG_OK) return s;
  int mine = -1;
  if (rig_status s = duplicate_for_driver(fd, call, sync ? "a sync file" : "a semaphore", &mine); s != RIG_OK)
    return s;
  bool taken = false;
  rig_status s = hand_over_empty(
      device,
      [&](uint64_t) {
        rig_status w = wait(*f, mine);
        taken = w == RIG_OK;
        return w;
      },
      point);
  if (!taken) drop_refused(mine);
  return s;
}

}  // namespace

rig_status export_semaphore_fd(uint64_t point, int *fd, uint64_t *value) {
  SemaphoreFds *f = nullptr;
  if (rig_status s = exporting(point, false, "point_export_semaphore_fd", &f); s != RIG_OK) return s;
  return f->export_semaphore_fd(point_value(point), fd, value);
}

rig_status export_sync_fd(uint64_t point, int *fd) {
  SemaphoreFds *f = nullptr;
  if (rig_status s = exporting(point, true, "point_export_sync_fd", &f); s != RIG_OK) return s;
  return f->export_sync_fd(point_value(point), fd);
}

rig_status import_semaphore_fd(Device &device, int fd, uint64_t value, uint64_t *point) {
  return import_point(device, fd, false, "point_import_semaphore_fd", point,
                      [&](SemaphoreFds &f, int mine) { return f.queue_wait_semaphore_fd(mine, value); });
}

rig_status import_sync_fd(Device &device, int fd, uint64_t *point) {
  // -1 is a sync file already signaled (Vulkan's convention, which an export may answer for a point already
  // reached): nothing to wait for, so nothing to import.
  if (fd == -1) {
    if (!fds_of(device, true, "point_import_sync_fd")) return RIG_UNSUPPORTED;
    return hand_over_empty(device, [](uint64_t) { return RIG_OK; }, point);
  }
  return import_point(device, fd, true, "point_import_sync_fd", point,
                      [&](SemaphoreFds &f, int mine) { return f.queue_wait_sync_fd(mine); });
}

}  // namespace rig::interop
