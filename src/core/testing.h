// Engine observation for the tests only: the model test compares what each submit collected (the highest
// point per other device, before dropping reached ones) with its reference model. One flag of the device's
// first line on the submit path when unset (Device::observed).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rig::testing {

using CollectObserver = void (*)(void *user, uint32_t device_index, const uint64_t *points, size_t count);
void set_collect_observer(CollectObserver observer, void *user);

struct Observer {
  std::atomic<CollectObserver> fn{nullptr};
  std::atomic<void *> user{nullptr};
};
extern Observer collect_observer;

}  // namespace rig::testing
