// The GPUs rig has opened and their primary contexts. Every rig device on one GPU ("cuda:0" opened
// several times) shares that GPU's primary context, as the CUDA runtime does, so their memory, modules
// and events are usable by one another without peer access.
#pragma once

#include <rig.h>

#include <atomic>

#include "drivers/cuda/api.h"

namespace rig::cuda {

// One GPU. Its primary context is retained once, the first time a device on it opens, and never
// released: timeline words, in-queue waits of other devices and modules may outlive any one rig device,
// and a context destroyed under them would free their memory (the CUDA runtime keeps its primary
// contexts until exit for the same reason).
struct Gpu {
  unsigned ordinal = 0;
  cu::Device device = 0;
  cu::Context context = nullptr;
  // Set once a device on this GPU is lost: its stream may never drain again (a sticky error, or a wait on
  // a lost producer's event), so whole-context synchronisation (module unload) is no longer attempted.
  mutable std::atomic<bool> had_loss{false};
};

// The GPU of `ordinal`, retaining its primary context on first use. RIG_NOT_FOUND where there is none.
rig_status gpu_at(const Api &api, unsigned ordinal, const Gpu **out);

// Makes `context` current on this thread for a scope and restores the caller's context afterwards, so
// rig never changes what a program's own CUDA code sees as current.
class CurrentContext {
 public:
  CurrentContext(const Api &api, cu::Context context) : api_(api) {
    if (api_.cuCtxGetCurrent(&previous_) != cu::SUCCESS) previous_ = nullptr;
    if (previous_ != context) set_ = api_.cuCtxSetCurrent(context) == cu::SUCCESS;
  }
  ~CurrentContext() {
    if (set_) api_.cuCtxSetCurrent(previous_);
  }
  CurrentContext(const CurrentContext &) = delete;
  CurrentContext &operator=(const CurrentContext &) = delete;

 private:
  const Api &api_;
  cu::Context previous_ = nullptr;
  bool set_ = false;
};

}  // namespace rig::cuda
