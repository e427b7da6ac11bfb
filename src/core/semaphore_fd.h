// The semaphore-descriptor concern of the driver interface (core/driver.h): a point of a driver's timeline
// as a file descriptor another device or process waits on, and such a descriptor as a wait in the driver's
// queue (Vulkan's VK_KHR_external_semaphore_fd: a timeline semaphore's opaque fd with a value, or a sync
// file). A driver whose API has them returns this from DriverDevice::semaphore_fds(); the interop layer
// (src/interop/semaphore_fd.cpp) is its only caller.
#pragma once

#include <rig.h>

#include <cstdint>

namespace rig {

class SemaphoreFds {
 public:
  // Whether this device's timeline leaves as an opaque fd and such fds come back as in-queue waits; and
  // whether points leave and come back as sync files. Decided when the device opens.
  virtual bool can_semaphore_fd() const = 0;
  virtual bool can_sync_fd() const = 0;

  // A new opaque fd of this device's timeline (the caller owns it) and the semaphore value that first
  // covers `value` (handed over and committed): waiting for it is waiting for `value`.
  virtual rig_status export_semaphore_fd(uint64_t value, int *fd, uint64_t *wait_value) = 0;
  // A new sync file (the caller owns it) that signals once `value` (handed over and committed) is reached.
  virtual rig_status export_sync_fd(uint64_t value, int *fd) = 0;

  // Called holding the device's turn, before hand_over of its next value: makes the device's queue wait
  // for the timeline semaphore of `fd` to reach `fd_value`, or for the sync file `fd`. On success the
  // driver owns `fd`; on failure it stays the caller's. The driver's refusal as RIG_INVALID_ARGUMENT with
  // its words (the device is not lost).
  virtual rig_status queue_wait_semaphore_fd(int fd, uint64_t fd_value) = 0;
  virtual rig_status queue_wait_sync_fd(int fd) = 0;

 protected:
  ~SemaphoreFds() = default;
};

}  // namespace rig
