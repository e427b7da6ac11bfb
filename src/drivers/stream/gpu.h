// The GPUs a stream family has opened, and the current-context guard every call into the family makes.
// Every rig device on one GPU ("cuda:0" opened several times) shares that GPU's context (CUDA's primary
// context, HIP's device), so their memory, modules and events are usable by one another without peer access.
#pragma once

#include <rig.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "drivers/stream/calls.h"

namespace rig::stream {

// Device memory a rig device keeps for its next loads (its reuse pool: stream/reuse_pool.cpp): blocks of
// mem_alloc that its frees gave back, by size. Read and written holding `lock`, which no driver call is made
// under.
struct KeptBlocks {
  std::mutex lock;
  std::multimap<size_t, DevicePtr> blocks;  // length -> address
  bool released = false;                    // the device was released: nothing is kept from then on
};

// One GPU of a family, kept for the life of the process (a context released under another device's queued
// wait or module would free their memory; the CUDA runtime keeps its primary contexts until exit too).
struct Gpu {
  const Family *family = nullptr;
  unsigned ordinal = 0;
  int device = 0;              // what attribute and peer queries take (CUdevice, the HIP device id)
  Context context = nullptr;   // what set_current takes
  // Set once a device on this GPU is lost: its stream may never drain again (a sticky error, or a wait on a
  // lost producer's event), so whole-context synchronisation (module unload) is no longer attempted.
  mutable std::atomic<bool> had_loss{false};
  // The reuse pools of rig's devices on this GPU (stream/reuse_pool.cpp), listed while they exist: what one
  // device's pool keeps is memory another device on this GPU may be short of (reclaim_for_allocation).
  // Lock order: reuse_lock, then a pool's lock.
  mutable std::mutex reuse_lock;
  mutable std::vector<KeptBlocks *> reuse_pools;
  // Set the first time this GPU's library refused a call naming one of rig's streams that it then took with
  // the context current (CurrentWhenAsked): from then on every hand-over on this GPU makes it current first
  // (each device reads its own copy, taken when it opens and set with this one: a device open before this was
  // set learns it at its own first refusal, a call that enqueued nothing).
  mutable std::atomic<bool> stream_calls_want_current{false};
};

// Makes `gpu`'s context current on this thread for a scope and restores the caller's afterwards, so rig
// never changes what a program's own CUDA or HIP code sees as current. One call (the query) where the
// context is already current, three where another or none is (the query, a switch, the switch back). A
// thread-local cache of what is current cannot stand in for the query: the program's own cuCtxSetCurrent,
// cuCtxPushCurrent or cudaSetDevice on this thread between two rig calls is invisible to rig. Every call
// that names no stream of rig's (allocation, registration, modules, host waits) runs under it.
class Current {
 public:
  explicit Current(const Gpu &gpu) { make(gpu); }
  ~Current() {
    if (set_) calls_->set_current(previous_);  // null too: the thread had no context before
  }
  Current(const Current &) = delete;
  Current &operator=(const Current &) = delete;

 private:
  friend class CurrentWhenAsked;
  // Nothing made current yet: CurrentWhenAsked makes it only when asked. (Not std::optional<Current>: GCC
  // 12 warns, wrongly, that the optional's destructor may read set_ and calls_ uninitialized.)
  Current() = default;
  void make(const Gpu &gpu) {
    calls_ = &gpu.family->calls;
    if (calls_->get_current(&previous_) != SUCCESS) previous_ = nullptr;
    if (previous_ != gpu.context) set_ = calls_->set_current(gpu.context) == SUCCESS;
  }
  const Calls *calls_ = nullptr;
  Context previous_ = nullptr;
  bool set_ = false;
};

// The guard of a hand-over, whose every call names one of rig's streams (or an event recorded on one): a
// call that names a stream runs in the stream's context whatever the thread has current (CUDA: "the CUDA
// context associated with this stream" for cuLaunchKernelEx, and cuStreamWaitEvent takes an event of any
// context; HIP: the stream's device), so the hand-over makes no context query, the one call per submit the
// hand-written program of bench/cuda does not make (bench/README.md's table, tests/cuda/test_cuda_floor.cpp).
// A library that refuses such a call for want of the context current is answered by making it current
// (Current) and making the same call again; where that succeeds the GPU remembers it and every later
// hand-over on it makes the context current first, as before. Not for calls that name no stream.
class CurrentWhenAsked {
 public:
  // `remembered`: the device's copy of Gpu::stream_calls_want_current, in a line the hand-over reads anyway
  // (the GPU's is one more line a driver call pushed out). `now`: make the context current at once (a caller
  // that also makes calls naming no stream: a batch's graph capture and instantiation).
  CurrentWhenAsked(const Gpu &gpu, std::atomic<bool> &remembered, bool now = false)
      : gpu_(gpu), remembered_(remembered) {
    if (now || remembered.load(std::memory_order_relaxed)) [[unlikely]]
      make_current();
  }
  // Makes the call `make` makes (one naming the stream) and answers its result. Where it failed and the context was
  // not made current, makes it current and makes the call once more (a refused call enqueued nothing).
  template <class Make>
  Result call(Make &&make) {
    Result r = make();
    if (r == SUCCESS || made_) [[likely]]
      return r;
    return again(make);
  }

 private:
  template <class Make>
  [[gnu::noinline, gnu::cold]] Result again(Make &make) {
    make_current();
    Result r = make();
    if (r == SUCCESS) {
      gpu_.stream_calls_want_current.store(true, std::memory_order_relaxed);
      remembered_.store(true, std::memory_order_relaxed);
    }
    return r;
  }
  void make_current() {
    current_.make(gpu_);
    made_ = true;
  }
  const Gpu &gpu_;
  std::atomic<bool> &remembered_;
  Current current_;
  bool made_ = false;  // current_ made the context current (or found it so)
};

// The GPUs `family`'s library lists (device_count), -1 where the call fails. Never blocks on rig's locks.
int device_count(const Family &family);

// The GPU of `ordinal` in `family`, made by Family::open_gpu the first time and kept for the life of the
// process: RIG_NOT_FOUND with a message where the library lists no such GPU. Thread-safe (a lock held
// while the family opens it, and so while the library answers device_count).
rig_status gpu_at(const Family &family, unsigned ordinal, const Gpu **out);

}  // namespace rig::stream
