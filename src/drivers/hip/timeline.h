// A HIP device's timeline: the values its stream has reached, readable by the host without a runtime call
// and waitable by other HIP devices' streams. The same two ways as the CUDA driver's (drivers/cuda/
// timeline.h), chosen per device when it opens:
//  - stream memory operations (where the device can wait on a value): after each value's work the stream
//    writes the value into a word of pinned, device-mapped host memory (hipStreamWriteValue64, ordered after
//    the work before it on the stream); the host reads the word; another stream waits with
//    hipStreamWaitValue64(GTE). One word, no per-value object.
//  - events otherwise: a ring of events, one recorded per value; the host queries them; another stream waits
//    with hipStreamWaitEvent.
#pragma once

#include <rig.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "drivers/hip/api.h"

namespace rig::hip {

// What other devices may still read of a timeline after its device is gone. Slots and their words are never
// freed or reused: a stream of another device may still have a queued wait that reads the word.
struct TimelineSlot {
  uint64_t *word = nullptr;     // pinned host memory, written by the stream (memory-operation mode)
  void *address = nullptr;      // the word as streams address it (hipHostGetDevicePointer)
  std::atomic<bool> lost{false};
  std::atomic<uint64_t> frozen{0};  // the last value reached when the device was lost
  char name[32] = {};               // the device's name, for messages of devices that wait on it

  // Lets a device whose queue waits on this timeline look for this device's fault (a fault no one has seen
  // yet would otherwise keep the waiting device's stream blocked for good). `probe(owner)` runs under
  // `owner_lock`; the owner clears both before it goes away.
  std::mutex owner_lock;
  void *owner = nullptr;
  void (*probe)(void *owner) = nullptr;
};

// Written into a lost device's word so that streams waiting on it move on (their devices are then lost by
// HipDevice::wait, which sees the producer lost). Above every point value.
constexpr uint64_t kReleasedWord = uint64_t{1} << 62;

// A fresh slot with its word set to 0 (pinned pages allocated with the calling thread's current device).
rig_status take_timeline_slot(const Api &api, TimelineSlot **out);

class Timeline {
 public:
  Timeline(const Api &api, Stream stream, TimelineSlot *slot, bool memory_operations)
      : api_(api), stream_(stream), slot_(slot), memops_(memory_operations) {}
  ~Timeline();
  Timeline(const Timeline &) = delete;
  Timeline &operator=(const Timeline &) = delete;

  // Creates the event ring (events mode). Current device set by the caller.
  rig_status init();
  bool memory_operations() const { return memops_; }
  TimelineSlot *slot() const { return slot_; }

  // Enqueues "value reached" after the work already on the stream. Called holding the device's turn, values
  // in order. May block (events mode) until the value that last used the ring entry is reached.
  Error mark(uint64_t value);

  // Enqueues on `consumer` a wait for `value` of this timeline (value already marked).
  Error enqueue_wait(Stream consumer, bool consumer_memops, uint64_t value);

  // The last value reached. Never blocks on the device; after freeze(), the value reached at the loss.
  uint64_t signaled() const;

  // Loss: remembers the value reached now (at most `cap`) and releases every stream waiting on this timeline.
  void freeze(uint64_t cap = UINT64_MAX);

 private:
  static constexpr size_t kRing = 256;  // events in flight before mark() waits for the oldest

  const Api &api_;
  Stream stream_;
  TimelineSlot *slot_;
  bool memops_;
  mutable std::mutex ring_lock_;
  std::vector<Event> ring_;
  std::vector<uint64_t> ring_value_;          // the value each entry was last recorded for (0: none)
  mutable std::atomic<uint64_t> reached_{0};  // highest value seen done (events mode)
  std::atomic<uint64_t> marked_{0};           // highest value recorded
};

}  // namespace rig::hip
