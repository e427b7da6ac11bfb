#include "load/trace.h"

#include <cstdlib>
#include <cstring>

#include "core/deadline.h"
#include "core/log.h"

namespace rig::load {
namespace {

const char *const kNames[Trace::MARKS] = {"planned", "staging made", "running", "first chunk read", "first buffer made",
                                          "first copy submitted", "first tensor handed out", "all copies submitted", "done",
                                          "staging released"};

bool trace_on() {
  static const bool on = [] {
    const char *v = std::getenv("RIG_LOAD_TRACE");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

}  // namespace

Trace::Trace() : on_(trace_on()) {}

void Trace::mark(Mark m) {
  if (!on_ || seen_[m].load(std::memory_order_relaxed) || seen_[m].exchange(true)) return;
  say(RIG_LOG_DEBUG, "rig load trace: %8.3f ms  %s", double(steady_ns() - t0_ns_) * 1e-6, kNames[m]);
}

}  // namespace rig::load
