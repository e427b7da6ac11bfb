// The GPUs a stream family has opened, and the current-context guard every call into the family makes.
// Every rig device on one GPU ("cuda:0" opened several times) shares that GPU's context (CUDA's primary
// context, HIP's device), so their memory, modules and events are usable by one another without peer access.
#pragma once

#include <rig.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "drivers/stream/calls.h"

namespace rig::stream {

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
  // The reuse pools of rig's devices on this GPU (stream/reuse_pool.cpp), each with the stream its frees go
  // on, listed while they exist: what one device's pool keeps is memory another device on this GPU may be
  // short of (reclaim_for_allocation).
  struct ReusePool {
    MemPool pool;
    Stream frees;
    bool operator==(const ReusePool &) const = default;
  };
  mutable std::mutex reuse_lock;
  mutable std::vector<ReusePool> reuse_pools;
};

// Makes `gpu`'s context current on this thread for a scope and restores the caller's afterwards, so rig
// never changes what a program's own CUDA or HIP code sees as current. One call (the query) where the
// context is already current, three where another or none is (the query, a switch, the switch back).
// The query is the one call per submit that the hand-written program does not make (bench/README.md's
// table, held by tests/cuda/test_cuda_floor.cpp), and it stays: a thread-local cache of what is current
// cannot stand in for it, because the program's own cuCtxSetCurrent, cuCtxPushCurrent or cudaSetDevice on
// this thread between two submits is invisible to rig; a stale cache would enqueue with another context
// current, which the driver does not document as safe for the submit path's calls (the guarantee kept: every
// call rig makes runs with its GPU's context current).
class Current {
 public:
  explicit Current(const Gpu &gpu) : calls_(gpu.family->calls) {
    if (calls_.get_current(&previous_) != SUCCESS) previous_ = nullptr;
    if (previous_ != gpu.context) set_ = calls_.set_current(gpu.context) == SUCCESS;
  }
  ~Current() {
    if (set_) calls_.set_current(previous_);  // null too: the thread had no context before
  }
  Current(const Current &) = delete;
  Current &operator=(const Current &) = delete;

 private:
  const Calls &calls_;
  Context previous_ = nullptr;
  bool set_ = false;
};

// The GPUs `family`'s library lists (device_count), -1 where the call fails. Never blocks on rig's locks.
int device_count(const Family &family);

// The GPU of `ordinal` in `family`, made by Family::open_gpu the first time and kept for the life of the
// process: RIG_NOT_FOUND with a message where the library lists no such GPU. Thread-safe (a lock held
// while the family opens it, and so while the library answers device_count).
rig_status gpu_at(const Family &family, unsigned ordinal, const Gpu **out);

}  // namespace rig::stream
