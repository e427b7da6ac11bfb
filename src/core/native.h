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

// An interprocess handle of the API, as bytes (CUipcMemHandle and CUipcEventHandle are 64 opaque bytes).
struct IpcBytes {
  unsigned char bytes[64];
};

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
  // of the API). `carried` are waits on other rig devices the native work made (a stream's stream_wait;
  // never one on this device's own values, whose loss loses `value` anyway): a producer of one lost short of
  // its value loses `value` too. Allocates nothing where `carried` is empty. Enqueues nothing of rig's and
  // answers RIG_INVALID_ARGUMENT where the driver refuses the handle (the device is not lost).
  virtual rig_status queue_wait_stream(void *stream, uint64_t value, std::span<const QueueWait> carried) = 0;
  virtual rig_status queue_wait_event(void *event, uint64_t value) = 0;

  // A new event that completes once this device's `value` (handed over) is reached; the caller owns it.
  // `reached`: the value is reached already (the event is then never recorded: complete).
  virtual rig_status export_event(uint64_t value, bool reached, void **event) = 0;

  // Interprocess handles (stream/ipc.cpp): 64 bytes of the API's (CUipcMemHandle, CUipcEventHandle) that
  // another process opens. Whether the library has the calls for memory, and for events (decided once).
  virtual bool can_ipc_memory() const = 0;
  virtual bool can_ipc_event() const = 0;
  // The handle of `memory` (this driver's own device memory, the base of an allocation). RIG_UNSUPPORTED
  // for memory the API cannot share (host memory, memory opened from another process).
  virtual rig_status export_memory_ipc(const Memory &memory, IpcBytes *handle) = 0;
  // Opens another process's handle on this device's GPU: `length` bytes at `offset` from the opened base,
  // as a Memory that free() closes. The driver's refusal as RIG_INVALID_ARGUMENT with its words.
  virtual rig_status import_memory_ipc(const IpcBytes &handle, size_t offset, size_t length, Memory *out) = 0;
  // A new interprocess event that completes once `value` (handed over) is reached (never recorded where
  // `reached`), and its handle. The caller ends it with destroy_event once no process waits on it.
  virtual rig_status export_event_ipc(uint64_t value, bool reached, void **event, IpcBytes *handle) = 0;
  virtual void destroy_event(void *event) = 0;
  // As queue_wait_event, for another process's event: opens the handle, waits in queue for its latest
  // record, closes the opened event (the queued wait keeps it, CUDA's rule).
  virtual rig_status queue_wait_event_ipc(const IpcBytes &handle, uint64_t value) = 0;

 protected:
  ~NativeHandles() = default;
};

}  // namespace rig
