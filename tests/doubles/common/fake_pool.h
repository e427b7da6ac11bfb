// The fake stream library's device memory (tests/doubles/fake_stream, behind the fake libcuda and the fake
// HIP runtime): its accounting within a limit (device_memory_limit, the device_bytes counter) and the
// stream-ordered pools (cuMemPoolCreate..., hipMemPoolCreate...), so that rig's reuse pool
// (src/drivers/stream/reuse_pool.cpp) meets the same driver on either family. The library keeps one Pools
// in its state, over its state lock: it checks its handles (streams, sticky errors) and keeps its regions;
// this file decides what a pool keeps, reuses and gives back.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "fake_gpu.h"

namespace fake_pool {

using namespace rig::stream::values;
using rig::stream::types::MemAccessDesc;
using rig::stream::types::MemPoolProps;
using Result = rig::stream::types::Result;

// The counters both fakes report under these names (fakecuda_query, fakehip_query): pool allocations that
// succeeded, those served from memory a free gave back to the pool, what pools keep now, and device memory
// in use (pools' kept memory included). Not reset with the doubles' other counters: the last two are state.
#define FAKE_POOL_COUNTERS(X) X(pool_allocations) X(pool_reuses) X(pool_kept_bytes) X(device_bytes)

struct Counters {
#define FAKE_POOL_COUNTER(name) std::atomic<long long> name{0};
  FAKE_POOL_COUNTERS(FAKE_POOL_COUNTER)
#undef FAKE_POOL_COUNTER
};

// A double's device memory: where its bytes come from (the fake libcuda's shared-memory arena, so that an
// IPC handle can name them; the fake HIP runtime's heap) and what is in use, within a limit.
struct DeviceMemory {
  using Obtain = void *(*)(size_t bytes);  // null where the source has no more
  using GiveBack = void (*)(void *p, size_t bytes);
  DeviceMemory(Obtain o, GiveBack g) : obtain(o), give_back(g) {}

  Obtain obtain;
  GiveBack give_back;
  Counters count;

  // `bytes` of device memory within `limit` (bytes of every device, pools' kept memory included; 0: no
  // limit), or null where it runs out. Takes no lock.
  void *allocate(size_t bytes, long long limit) {
    if (bytes > (size_t{64} << 30)) return nullptr;
    if (limit > 0 && count.device_bytes.load() + static_cast<long long>(bytes) > limit) return nullptr;
    void *p = obtain(bytes);
    if (!p) return nullptr;
    count.device_bytes += static_cast<long long>(bytes);
    std::memset(p, 0xCD, bytes);  // uninitialised device memory is not zero: tests must not rely on it
    return p;
  }

  void release(uintptr_t p, size_t bytes) {
    give_back(reinterpret_cast<void *>(p), bytes);
    count.device_bytes -= static_cast<long long>(bytes);
  }
};

// A stream-ordered pool: what its frees gave back, kept up to its release threshold (applied at the free,
// where CUDA and HIP apply it at the next synchronisation), reused by an allocation of the same size: on the
// freeing stream at once (stream order), on another once the stream reached the free or, before that, by
// making the allocating stream wait for the free (MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, on by
// default in both); the devices besides its own that may use its memory in kernels (the access list: peer
// access does not reach a pool's memory).
struct Pool {
  struct Kept {
    uintptr_t p;
    const void *pending;  // the stream whose free is not reached yet, or null
    std::shared_ptr<std::atomic<bool>> reached;  // set when that stream reaches the free
  };
  int ordinal = 0;
  unsigned long long threshold = 0;
  std::multimap<size_t, Kept> kept;
  size_t kept_bytes = 0;
  size_t outstanding = 0;  // blocks allocated and not freed, and frees not reached
  bool destroyed = false;
  std::set<int> access;

  // Whether a kernel of device `ordinal` may use the pool's memory.
  bool reaches(int ordinal_of_kernel) const { return ordinal_of_kernel == ordinal || access.count(ordinal_of_kernel); }
};

// A double's device memory and its pools. The pool calls take the double's state lock themselves, except
// allocate and free_async, whose caller holds it (it keeps its regions under the same lock).
class Pools {
 public:
  Pools(DeviceMemory::Obtain obtain, DeviceMemory::GiveBack give_back, std::mutex &lock)
      : memory(obtain, give_back), lock_(lock) {}

  DeviceMemory memory;

  // A pool of pinned device memory on one of `devices` GPUs, with no interprocess handle type (the only kind
  // the fakes make); NOT_SUPPORTED where the double's mem_pools switch is off, as on a GPU without pools.
  Result create(Pool **pool, const MemPoolProps *props, bool supported, long long devices) {
    if (!pool || !props) return ERROR_INVALID_VALUE;
    if (!supported) return ERROR_NOT_SUPPORTED;
    if (props->alloc_type != MEM_ALLOCATION_TYPE_PINNED || props->location_type != MEM_LOCATION_TYPE_DEVICE ||
        props->location_id < 0 || props->location_id >= devices || props->handle_types != 0)
      return ERROR_INVALID_VALUE;
    *pool = new Pool;
    (*pool)->ordinal = props->location_id;
    return SUCCESS;
  }

  Result destroy(Pool *pool) {
    if (!pool) return ERROR_INVALID_VALUE;
    std::lock_guard g(lock_);
    pool->threshold = 0;  // what is freed from now on goes back to the driver
    trim(pool, 0);
    pool->destroyed = true;
    if (pool->outstanding == 0) delete pool;  // else with its last block's free
    return SUCCESS;
  }

  Result set_attribute(Pool *pool, int attribute, void *value) {
    if (!pool || !value) return ERROR_INVALID_VALUE;
    std::lock_guard g(lock_);
    if (attribute == MEMPOOL_ATTR_RELEASE_THRESHOLD) {
      pool->threshold = *static_cast<unsigned long long *>(value);
      trim(pool, pool->threshold);
      return SUCCESS;
    }
    return attribute >= 1 && attribute <= 3 ? SUCCESS : ERROR_INVALID_VALUE;  // the reuse policies: taken
  }

  Result trim_to(Pool *pool, size_t keep) {
    if (!pool) return ERROR_INVALID_VALUE;
    std::lock_guard g(lock_);
    trim(pool, keep);
    return SUCCESS;
  }

  // Grants or takes back other devices' access; INVALID_DEVICE where the GPUs cannot be peers (peer_access 0).
  Result set_access(Pool *pool, const MemAccessDesc *access, size_t count, long long devices, bool peer_access) {
    if (!pool || (!access && count)) return ERROR_INVALID_VALUE;
    std::lock_guard g(lock_);
    for (size_t i = 0; i < count; ++i) {
      const MemAccessDesc &a = access[i];
      if (a.location_type != MEM_LOCATION_TYPE_DEVICE || a.location_id < 0 || a.location_id >= devices)
        return ERROR_INVALID_VALUE;
      if (a.location_id == pool->ordinal) continue;  // its own device always has it
      if (!peer_access) return ERROR_INVALID_DEVICE;
      if (a.flags == MEM_ACCESS_READ_WRITE)
        pool->access.insert(a.location_id);
      else
        pool->access.erase(a.location_id);
    }
    return SUCCESS;
  }

  // `bytes` from the pool for work on `st` (a live stream of the double's, its owner without a sticky
  // error): a kept block of that size, free or pending on `st` first, else one still pending on another
  // stream (`st` then waits for that free: the internal dependency), else new memory within `limit`.
  // OUT_OF_MEMORY where there is none. The caller holds the lock, and adds the block's region.
  template <class Owner>
  Result allocate(Pool *pool, size_t bytes, fake_gpu::Stream<Owner> *st, long long limit, uintptr_t *out) {
    if (!out || bytes == 0 || !pool || pool->destroyed) return ERROR_INVALID_VALUE;
    uintptr_t p = 0;
    auto [it, end] = pool->kept.equal_range(bytes);
    auto taken = end;
    for (auto at = it; at != end && taken == end; ++at)
      if (!at->second.pending || at->second.pending == st) taken = at;
    if (taken == end && it != end) taken = it;
    if (taken != end) {  // reused: no new memory
      it = taken;
      if (it->second.pending && it->second.pending != st)  // the internal dependency
        st->push([st, reached = it->second.reached] { fake_gpu::poll_until(st, [&] { return reached->load(); }); });
      p = it->second.p;
      pool->kept.erase(it);
      pool->kept_bytes -= bytes;
      memory.count.pool_kept_bytes -= static_cast<long long>(bytes);
      ++memory.count.pool_reuses;
    } else if (void *fresh = memory.allocate(bytes, limit)) {
      p = reinterpret_cast<uintptr_t>(fresh);
    } else {
      return ERROR_OUT_OF_MEMORY;
    }
    ++pool->outstanding;
    ++memory.count.pool_allocations;
    *out = p;
    return SUCCESS;
  }

  // The free of device memory [p, p+bytes) on `st`, its region already gone (the pointer is dead at once):
  // a pooled block (`pool` not null) is the pool's at once for allocations on `st` (stream order), kept up
  // to the threshold, and for other streams once `st` reaches the free; a plain one, or one the pool does
  // not keep, goes back to the driver then. The caller holds the lock; the free takes it again when `st`
  // reaches it.
  template <class Owner>
  void free_async(Pool *pool, uintptr_t p, size_t bytes, fake_gpu::Stream<Owner> *st) {
    bool kept = false;
    auto reached = std::make_shared<std::atomic<bool>>(false);
    if (pool && !pool->destroyed && pool->kept_bytes + bytes <= pool->threshold) {
      pool->kept.emplace(bytes, Pool::Kept{p, st, reached});
      pool->kept_bytes += bytes;
      memory.count.pool_kept_bytes += static_cast<long long>(bytes);
      kept = true;
    }
    st->push([this, pool, p, bytes, kept, reached] {
      std::lock_guard g(lock_);
      if (pool)
        free_reached(pool, p, bytes, kept);
      else
        memory.release(p, bytes);
      reached->store(true);
    });
  }

 private:
  std::mutex &lock_;  // the double's state lock

  // Gives back kept blocks whose frees were reached until the pool keeps at most `keep` bytes.
  void trim(Pool *pool, size_t keep) {
    for (auto it = pool->kept.begin(); it != pool->kept.end() && pool->kept_bytes > keep;) {
      if (it->second.pending) {
        ++it;
        continue;
      }
      memory.release(it->second.p, it->first);
      pool->kept_bytes -= it->first;
      memory.count.pool_kept_bytes -= static_cast<long long>(it->first);
      it = pool->kept.erase(it);
    }
  }

  // The free of pooled block p reached on its stream: the block is the pool's for any stream now (or the
  // driver's, where the pool did not keep it); a destroyed pool's last one takes the pool with it.
  void free_reached(Pool *pool, uintptr_t p, size_t bytes, bool kept) {
    if (kept)
      for (auto [it, end] = pool->kept.equal_range(bytes); it != end; ++it)
        if (it->second.p == p) it->second.pending = nullptr;
    if (!kept) memory.release(p, bytes);
    if (pool->destroyed) trim(pool, 0);
    if (--pool->outstanding == 0 && pool->destroyed) delete pool;
  }
};

}  // namespace fake_pool
