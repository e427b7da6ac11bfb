// The native-handle concern of the driver interface (core/driver.h): streams and events a program made with
// the device's own API (CUDA, HIP), outside rig. A driver whose API has them returns this from
// DriverDevice::native(); the interop layer (src/interop) is its only caller. Handles cross as void *: the
// engine never looks inside.
#pragma once

#include <rig.h>

#include <cstdint>
#include <span>

#include "core/driver_memory.h"
#include "core/driver_work.h"

namespace rig {

class NativeHandles {
 public:
  // The API's name ("CUDA", "HIP"): native handles of two devices mix only where it is the same.
  virtual const char *api() const = 0;
  // The DLPack device type and id of this device's memory (kDLCUDA 2, kDLROCM 10; the GPU's ordinal).
  virtual void dlpack_device(int32_t *type, int32_t *id) const = 0;

  // How the driver describes `length` bytes of its device memory at `address` made elsewhere (never freed
  // by rig: the allocation over it is not owned).
  virtual Memory foreign_memory(uint64_t address, size_t length) const = 0;

  // Whether a native stream of this device's GPU can wait in its queue for `producer`'s values.
  virtual bool can_stream_wait(const DriverDevice &producer) const = 0;
  // Enqueues on native `stream` (this device's GPU; null: the legacy stream) a wait for `producer`'s
  // `value` (handed over and committed; can_stream_wait said yes). Never blocks. RIG_LOST where the
  // producer was lost short of it; the driver's refusal of the stream as RIG_INVALID_ARGUMENT.
  virtual rig_status stream_wait(void *stream, DriverDevice &producer, uint64_t value) = 0;

  // Called holding the device's turn, before hand_over of `value`: makes the device's own queue wait for
  // what is enqueued so far on native `stream` (this device's GPU), or for `event`'s latest record (any GPU
  // of the API). `carried` are waits on rig devices the native work made (a stream's stream_wait): a
  // producer of one lost short of its value loses `value` too. Enqueues nothing of rig's and answers
  // RIG_INVALID_ARGUMENT where the driver refuses the handle (the device is not lost).
  virtual rig_status queue_wait_stream(void *stream, uint64_t value, std::span<const QueueWait> carried) = 0;
  virtual rig_status queue_wait_event(void *event, uint64_t value) = 0;

  // A new event that completes once this device's `value` (handed over) is reached; the caller owns it.
  // `reached`: the value is reached already (the event is then never recorded: complete).
  virtual rig_status export_event(uint64_t value, bool reached, void **event) = 0;

 protected:
  ~NativeHandles() = default;
};

}  // namespace rig
