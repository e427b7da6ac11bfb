// A CUDA device's timeline: the values its stream has reached, readable by the host without a driver
// call and waitable by other devices' streams.
//
// Two ways, chosen per device when it opens:
//  - stream memory operations (where the device can use 64-bit ones): after each value's work the stream
//    writes the value into a word of pinned, device-mapped host memory (cuStreamWriteValue64, which
//    fences the work's writes before it); the host reads the word; another stream waits with
//    cuStreamWaitValue64(GEQ). One word, no per-value object, no driver call to read.
//  - events otherwise: a ring of events, one recorded per value; the host queries them; another stream
//    waits with cuStreamWaitEvent.
#pragma once

#include <rig.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "drivers/cuda/api.h"

namespace rig::cuda {

// What other devices may still read of a timeline after its device is gone. Slots and their words are
// never freed or reused: a stream of another device may still have a queued wait that reads the word.
struct TimelineSlot {
  uint64_t *word = nullptr;      // pinned host memory, written by the stream (memory-operation mode)
  cu::DevicePtr address = 0;     // the word as streams address it (unified addressing: any context)
  std::atomic<bool> lost{false};
  std::atomic<uint64_t> frozen{0};  // the last value reached when the device was lost
  char name[32] = {};               // the device's name, for messages of devices that wait on it

  // Lets a device whose queue waits on this timeline look for this device's fault (a sticky error no one
  // has seen yet would otherwise keep the waiting device's stream, and its waits, blocked for good).
  // `probe(owner)` runs under `owner_lock`; the owner clears both before it goes away.
  std::mutex owner_lock;
  void *owner = nullptr;
  void (*probe)(void *owner) = nullptr;
};

// Written into a lost device's word so that streams of other devices waiting on it move on (their
// devices are then lost by CudaDevice::wait, which sees the producer lost). Above every point value.
constexpr uint64_t kReleasedWord = uint64_t{1} << 62;

// A fresh slot with its word set to 0; the calling thread's current context allocates the word's page.
rig_status take_timeline_slot(const Api &api, TimelineSlot **out);

class Timeline {
 public:
  Timeline(const Api &api, cu::Stream stream, TimelineSlot *slot, bool memory_operations)
      : api_(api), stream_(stream), slot_(slot), memops_(memory_operations) {}
  ~Timeline();
  Timeline(const Timeline &) = delete;
  Timeline &operator=(const Timeline &) = delete;

  // Creates the event ring (events mode). Current context set by the caller.
  rig_status init();
  bool memory_operations() const { return memops_; }
  TimelineSlot *slot() const { return slot_; }

  // Enqueues "value reached" after the work already on the stream. Called holding the device's turn,
  // values in order. May block (events mode) until the value that last used the ring entry is reached.
  cu::Result mark(uint64_t value);

  // Enqueues on `consumer` a wait for `value` of this timeline (value already marked). Events mode is
  // safe against this device's concurrent mark(): the ring entry is checked and used under a lock.
  cu::Result enqueue_wait(cu::Stream consumer, bool consumer_memops, uint64_t value);

  // The last value reached: a read of the word, or queries of the events after the last one seen done.
  // Never blocks on the device; after freeze(), the value reached at the loss.
  uint64_t signaled() const;

  // Loss: remembers the value reached now (at most `cap`) and releases every stream waiting on this
  // timeline.
  void freeze(uint64_t cap = UINT64_MAX);

 private:
  static constexpr size_t kRing = 256;  // events in flight before mark() waits for the oldest

  const Api &api_;
  cu::Stream stream_;
  TimelineSlot *slot_;
  bool memops_;
  // Events mode.
  mutable std::mutex ring_lock_;
  std::vector<cu::Event> ring_;
  std::vector<uint64_t> ring_value_;           // the value each entry was last recorded for (0: none)
  mutable std::atomic<uint64_t> reached_{0};   // highest value seen done
  std::atomic<uint64_t> marked_{0};            // highest value recorded
};

}  // namespace rig::cuda
