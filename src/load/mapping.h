// A region of memory mapped by the loader (a file's mapping, a staging pool's anonymous memory), shared by
// the rig wraps over its parts and unmapped by the last of them: each wrap's release callback is drop(),
// which rig calls once that wrap's buffers are released and every use of them is reached (rule 6), so the
// pages stay mapped while any copy may still read or write them.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>

#include "load/guarded_mapping.h"

namespace rig::load {

struct Mapping {
  void *base = nullptr;
  size_t length = 0;
  std::atomic<long> refs{1};  // the maker's, plus one per wrap given drop_mapping
  bool guarded = false;       // a file's, made by map_guarded (load/guarded_mapping.h)
  void drop() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (guarded) unmap_guarded(base, length);
      else munmap(base, length);
      delete this;
    }
  }
};

// A rig_release_fn for wraps over a Mapping (user: the Mapping, whose refs the caller raised for the wrap).
inline void drop_mapping(void *user) { static_cast<Mapping *>(user)->drop(); }

}  // namespace rig::load
