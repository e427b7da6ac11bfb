// RIG_LOAD_TRACE=1: each load's milestones said at RIG_LOG_DEBUG (core/log.h: stderr unless rig_set_log
// names a callback), in milliseconds from its rig_load_start call, once each (docs/environment.md). Why: a
// load's fixed time (the staging pool's making, its first buffers, its first chunk, the teardown of what it
// made) weighs most in a small file's first load, and the phases in rig_load_stats are sums over threads
// that cannot say when each began.
#pragma once

#include <atomic>
#include <cstdint>

namespace rig::load {

class Trace {
 public:
  enum Mark {
    PLANNED,          // the selection, placement and chunk plan made (rig_load_start)
    STAGING_MADE,     // every staging pool made or claimed (rig_load_start)
    RUNNING,          // the load's thread started
    FIRST_READ,       // a reader filled its first staging chunk
    FIRST_BUFFER,     // the first tensor's device buffer made
    FIRST_COPY,       // the first copy submitted
    FIRST_TENSOR,     // the first tensor handed out
    ALL_SUBMITTED,    // the last copy submitted
    DONE,             // the load finished (rig_load_wait returns)
    STAGING_RELEASED, // the staging made for this load released (after its copies were reached)
    MARKS
  };
  Trace();
  // Milliseconds count from `t0_ns` (steady clock), the load's start.
  void begin(uint64_t t0_ns) { t0_ns_ = t0_ns; }
  // Prints `mark` once, the first time it is reached (the later calls cost one relaxed load), where
  // RIG_LOAD_TRACE=1. Never blocks beyond the log's own write (stderr, or rig_set_log's callback); holds no
  // lock of the load's.
  void mark(Mark mark);

 private:
  bool on_;
  uint64_t t0_ns_ = 0;
  std::atomic<bool> seen_[MARKS] = {};
};

}  // namespace rig::load
