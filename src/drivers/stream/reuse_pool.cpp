// StreamDevice's reuse pool: device memory of kind kMemoryDeviceReused (core/driver_memory.h, the loader's
// tensors) comes from a stream-ordered pool of the device's own (cuMemPoolCreate) that keeps what is freed
// (its release threshold at the maximum), so memory freed by one load is the next load's without going
// back to the driver. Why: host-to-device copies into cuMemAlloc memory made right after other memory was
// freed ran about a tenth slower than into memory never freed before or kept by a pool (the driver's work
// after a free competes for a while; bench/probes/dst_probe.cu, bench/README.md, "Why: stream drivers").
// A pool of rig's own, not the device's default pool: a program's cudaMallocAsync keeps the default pool's
// behaviour.
//
// What the pool keeps is given back to the driver when an allocation on the device's GPU, by this device
// or another rig device opened on the same GPU, runs out of memory (reclaim_for_allocation, then one
// retry: each device has a pool of its own, whose memory no other device's allocation can take), and when
// the program releases the device (released(); a tensor freed after that goes back at its free). Its
// memory has no interprocess handle (stream/ipc.cpp says so), and another GPU reaches it through the
// pool's access list, not peer access (share_reused, from map_peer).
//
// Allocations go on the device's stream, frees on a stream of the pool's own that carries nothing else. The
// engine frees only memory whose every use it has seen reached, so a free needs no order after the
// device's work; and an allocation that reuses a free's memory is ordered after that free by the driver
// (opportunistically once the free is done, else by the dependency it inserts: CUDA's and HIP's
// REUSE_ALLOW_INTERNAL_DEPENDENCIES, on by default). Why a stream of its own: giving the pool's memory back
// means waiting for the frees to be reached, and the device's stream may wait on work the waiting thread
// has yet to start (a point imported from a program's stream, held shut): waiting for it there could hang
// for good, where the frees' stream is reached as soon as the GPU gets to it.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "drivers/stream/device.h"

namespace rig::stream {

bool StreamDevice::reuse_pool_ready() {
  std::call_once(reuse_once_, [this] {
    // RIG_REUSE_POOL=0: none (docs/environment.md): plain allocations whose memory goes back at each free,
    // for a program that shares the GPU's memory with another allocator, and for a before/after.
    if (const char *v = std::getenv("RIG_REUSE_POOL"); v && std::strcmp(v, "0") == 0) return;
    if (!calls_.mem_pool_create || !calls_.mem_pool_destroy || !calls_.mem_pool_set_attribute ||
        !calls_.mem_pool_trim || !calls_.mem_alloc_from_pool || !calls_.mem_free_async)
      return;  // an older library: the loader's tensors come from mem_alloc
    MemPoolProps props{};
    props.alloc_type = MEM_ALLOCATION_TYPE_PINNED;
    props.location_type = MEM_LOCATION_TYPE_DEVICE;
    props.location_id = gpu_.device;
    MemPool pool = nullptr;
    if (calls_.mem_pool_create(&pool, &props) != SUCCESS) return;  // a GPU without pools (attribute 115: 0)
    uint64_t keep_all = ~uint64_t{0};
    Stream frees = nullptr;
    if (calls_.mem_pool_set_attribute(pool, MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_all) != SUCCESS ||
        calls_.stream_create(&frees, STREAM_NON_BLOCKING) != SUCCESS) {
      calls_.mem_pool_destroy(pool);
      return;
    }
    {
      std::lock_guard hold(gpu_.reuse_lock);
      gpu_.reuse_pools.push_back({pool, frees});
    }
    reuse_frees_ = frees;
    reuse_pool_.store(pool, std::memory_order_release);
  });
  return reuse_pool_.load(std::memory_order_acquire) != nullptr;
}

rig_status StreamDevice::allocate_reused(size_t length, Memory *m) {
  MemPool pool = reuse_pool_.load(std::memory_order_acquire);
  DevicePtr address = 0;
  Result r = calls_.mem_alloc_from_pool(&address, length, pool, stream_);
  if (r == ERROR_OUT_OF_MEMORY && reclaim_for_allocation())
    r = calls_.mem_alloc_from_pool(&address, length, pool, stream_);
  if (r != SUCCESS) return fault(family_.names.mem_alloc_from_pool, r, false);
  m->address = address;
  m->handle = static_cast<uintptr_t>(MemoryTag::reused);
  return RIG_OK;
}

void StreamDevice::free_reused(const Memory &memory) noexcept {
  // Into the pool, on the frees' stream (every use reached: see the top). A lost device's stream takes
  // nothing; the pool's destruction returns the memory then. The free and the flag's read under the lock
  // released() sets the flag with: a free either comes before released()'s reclaim (which then gives it
  // back) or sees the flag and gives it back itself; without it a free racing the release stayed kept.
  bool outlived;
  {
    std::lock_guard hold(reuse_release_lock_);
    if (calls_.mem_free_async(memory.address, reuse_frees_) != SUCCESS) calls_.mem_free(memory.address);
    outlived = reuse_released_;
  }
  if (outlived) reclaim();  // a buffer that outlived its device
}

void StreamDevice::released() noexcept {
  {
    std::lock_guard hold(reuse_release_lock_);
    reuse_released_ = true;
  }
  if (MemPool pool = reuse_pool_.load(std::memory_order_acquire)) {
    uint64_t keep_none = 0;
    Current current(gpu_);
    calls_.mem_pool_set_attribute(pool, MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_none);
    reclaim();
  }
}

// The frees enqueued on a pool's stream return their memory to it once that stream reaches them: wait for
// it (frees only, so it is reached as soon as the GPU gets there; a lost device's is not waited for), then
// give everything back. The caller may block; it holds no rig lock but the GPU's reuse_lock.
static bool reclaim_pool(const Calls &calls, Gpu::ReusePool pool, bool wait) {
  if (wait) calls.stream_synchronize(pool.frees);
  return calls.mem_pool_trim(pool.pool, 0) == SUCCESS;
}

bool StreamDevice::reclaim() {
  MemPool pool = reuse_pool_.load(std::memory_order_acquire);
  return pool && reclaim_pool(calls_, {pool, reuse_frees_}, !lost());
}

bool StreamDevice::reclaim_for_allocation() {
  // Every pool of rig's on this GPU: another device's frees' stream holds frees only too, so waiting for it
  // is as safe as for this one's (a device of the GPU lost: none is waited for).
  bool retry = false;
  bool wait = !gpu_.had_loss.load(std::memory_order_acquire);
  std::lock_guard hold(gpu_.reuse_lock);
  for (Gpu::ReusePool pool : gpu_.reuse_pools) retry |= reclaim_pool(calls_, pool, wait);
  return retry;
}

rig_status StreamDevice::share_reused(const StreamDevice &peer) {
  MemPool pool = reuse_pool_.load(std::memory_order_acquire);
  if (!pool) return RIG_OK;
  std::lock_guard hold(reuse_access_lock_);
  if (reuse_access_.count(peer.gpu_.device)) return RIG_OK;
  if (!calls_.mem_pool_set_access)
    return fail(RIG_UNMAPPABLE, "%s cannot give %s access to its pooled memory: %s has no %s", info_.name.c_str(),
                peer.info_.name.c_str(), family_.library, family_.names.mem_pool_set_access);
  MemAccessDesc access{MEM_LOCATION_TYPE_DEVICE, peer.gpu_.device, MEM_ACCESS_READ_WRITE};
  Current current(gpu_);
  Result r = calls_.mem_pool_set_access(pool, &access, 1);
  if (r != SUCCESS)
    return fail(RIG_UNMAPPABLE, "%s(%s -> %s) refused: %s", family_.names.mem_pool_set_access, info_.name.c_str(),
                peer.info_.name.c_str(), family_.error_name(r));
  reuse_access_.insert(peer.gpu_.device);
  return RIG_OK;
}

void StreamDevice::destroy_reuse_pool() noexcept {
  MemPool pool = reuse_pool_.exchange(nullptr);
  if (!pool) return;
  {
    std::lock_guard hold(gpu_.reuse_lock);
    std::erase(gpu_.reuse_pools, Gpu::ReusePool{pool, reuse_frees_});
  }
  // Memory still allocated from it goes with the last free (the driver's rule for a destroyed pool).
  reclaim_pool(calls_, {pool, reuse_frees_}, !lost());
  calls_.mem_pool_destroy(pool);
  calls_.stream_destroy(reuse_frees_);
  reuse_frees_ = nullptr;
}

}  // namespace rig::stream
