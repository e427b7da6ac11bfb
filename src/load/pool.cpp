#include "load/pool.h"

#include <memory>

#include "core/error.h"

namespace rig::load {

rig_status StagingPool::make(rig_device device, size_t chunk_bytes, size_t count, std::unique_ptr<StagingPool> *out) {
  auto p = std::make_unique<StagingPool>();
  p->device_ = device;
  p->chunk_bytes_ = chunk_bytes;
  for (size_t i = 0; i < count; ++i) {
    rig_buffer b;
    rig_status s = rig_buffer_create(device, chunk_bytes, RIG_MEMORY_PINNED, &b);
    if (s != RIG_OK) return fail(s, "staging chunk %zu of %zu bytes: %s", i, chunk_bytes, rig_last_error());
    p->slots_.push_back(b);
    p->free_.push_back(i);
  }
  *out = std::move(p);
  return RIG_OK;
}

StagingPool::~StagingPool() {
  for (rig_buffer b : slots_) rig_buffer_release(b);
}

size_t StagingPool::acquire() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return !free_.empty(); });
  size_t s = free_.front();
  free_.pop_front();
  return s;
}

void StagingPool::give_back(size_t slot) {
  {
    std::lock_guard lock(mutex_);
    free_.push_back(slot);
  }
  cv_.notify_one();
}

bool StagingPool::claim() {
  std::lock_guard lock(mutex_);
  if (claimed_) return false;
  claimed_ = true;
  return true;
}
void StagingPool::unclaim() {
  std::lock_guard lock(mutex_);
  claimed_ = false;
}
bool StagingPool::claimed() {
  std::lock_guard lock(mutex_);
  return claimed_;
}

}  // namespace rig::load
