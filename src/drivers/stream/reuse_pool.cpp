// StreamDevice's reuse pool: device memory of kind kMemoryDeviceReused (core/driver_memory.h, the tensors of
// a caller that loads again) is plain mem_alloc memory whose frees the device keeps, by size, and hands to
// its next allocation of about that size, so memory freed by one load is the next load's without going back
// to the driver.
//
// Why keep it: host-to-device copies into cuMemAlloc memory made right after other memory was freed ran
// about a tenth slower than into memory kept (the driver's work after a free competes for a while;
// bench/probes/dst_probe.cu), and memory written before takes copies at the link. Why not a CUDA memory
// pool (cuMemPoolCreate, what this was until 2026-12-04): fresh pool memory takes a first load's copies at
// 49.1-49.5 GB/s where fresh cuMemAlloc memory takes 55.1 on an H200 (scripts/gpu/pool_probe.py,
// bench/README.md), so a process's first load through a kept staging pool ran at 0.69-0.83 of the link where
// the same load into plain memory ran at 0.88-0.90. Blocks rig keeps are plain memory: the first load gets
// cuMemAlloc's speed and later loads reuse memory written before.
//
// A block is reused for an allocation it fits with at most an eighth to spare (the smallest such block):
// a reload asks for the sizes it asked for before, and a much larger block stays for the allocation it
// suits. The engine frees only memory whose every use it has seen reached, so a kept block is free to reuse
// at once, with no order against any stream. What the pool keeps goes back to the driver when an allocation
// on the device's GPU, by this device or another rig device opened on the same GPU, runs out of memory
// (reclaim_for_allocation, then one retry), and when the program releases the device (released(); a tensor
// freed after that goes back at its free). Being plain memory, other GPUs reach it through peer access as
// any device memory; it has no interprocess handle all the same (stream/ipc.cpp): a block another process
// maps would be handed to the next load under it.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "drivers/stream/device.h"

namespace rig::stream {
namespace {

// Gives back every block `pool` keeps; whether there was any. The caller holds the GPU's context current.
bool give_back(const Calls &calls, KeptBlocks &pool) {
  std::multimap<size_t, DevicePtr> blocks;
  {
    std::lock_guard hold(pool.lock);
    blocks.swap(pool.blocks);
  }
  for (const auto &[length, address] : blocks) calls.mem_free(address);
  return !blocks.empty();
}

}  // namespace

bool StreamDevice::reuse_pool_ready() {
  std::call_once(reuse_once_, [this] {
    // RIG_REUSE_POOL=0: none (docs/environment.md): memory goes back at each free, for a program that
    // shares the GPU's memory with another allocator, and for a before/after.
    if (const char *v = std::getenv("RIG_REUSE_POOL"); v && std::strcmp(v, "0") == 0) return;
    reuse_ = std::make_unique<KeptBlocks>();
    std::lock_guard hold(gpu_.reuse_lock);
    gpu_.reuse_pools.push_back(reuse_.get());
  });
  return reuse_ != nullptr;
}

rig_status StreamDevice::allocate_reused(size_t length, Memory *m) {
  DevicePtr address = 0;
  size_t block = 0;
  {
    std::lock_guard hold(reuse_->lock);
    auto it = reuse_->blocks.lower_bound(length);
    if (it != reuse_->blocks.end() && it->first - length <= length / 8) {
      block = it->first;
      address = it->second;
      reuse_->blocks.erase(it);
    }
  }
  if (!address) {
    if (Result r = mem_alloc_or_reclaim(length, &address); r != SUCCESS)
      return fault(family_.names.mem_alloc, r, false);
    block = length;
  }
  m->address = address;
  m->extra = block;
  m->handle = static_cast<uintptr_t>(MemoryTag::reused);
  return RIG_OK;
}

void StreamDevice::free_reused(const Memory &memory) noexcept {
  // Kept while the device is open and not lost (a lost context's memory is no use to a later load); the
  // flag read under the lock released() sets it with, so a free racing the release is either given back
  // by released() or gives its block back itself.
  if (!lost()) {
    std::lock_guard hold(reuse_->lock);
    if (!reuse_->released) {
      reuse_->blocks.emplace(memory.extra, memory.address);
      return;
    }
  }
  calls_.mem_free(memory.address);
}

void StreamDevice::released() noexcept {
  if (!reuse_pool_ready()) return;
  {
    std::lock_guard hold(reuse_->lock);
    reuse_->released = true;
  }
  Current current(gpu_);
  give_back(calls_, *reuse_);
}

bool StreamDevice::reclaim_for_allocation() {
  // Every pool of rig's on this GPU, other devices' too: their blocks are this GPU's memory (the caller
  // holds its context current). Blocks no free could still be using: nothing to wait for.
  bool retry = false;
  std::lock_guard hold(gpu_.reuse_lock);
  for (KeptBlocks *pool : gpu_.reuse_pools) retry |= give_back(calls_, *pool);
  return retry;
}

void StreamDevice::destroy_reuse_pool() noexcept {
  if (!reuse_) return;
  {
    std::lock_guard hold(gpu_.reuse_lock);
    std::erase(gpu_.reuse_pools, reuse_.get());
  }
  give_back(calls_, *reuse_);
  reuse_.reset();
}

}  // namespace rig::stream
