// Every diagnostic rig says goes through say(): the one place that decides where it goes (rig_set_log's
// callback, or stderr by default) and whether its level is wanted. What is said at all stays decided by
// the environment variables at each source (docs/environment.md).
#pragma once

#include <rig.h>

namespace rig {

// Where diagnostics go: `fn` null means stderr. Messages below `min_level` are dropped.
struct LogSink {
  rig_log_fn fn;
  void *user;
  rig_log_level min_level;
};

// Sends later diagnostics to `sink` (rig_set_log). Takes the log's own lock to keep the sink alive for
// messages in flight; never waits for a message being said.
void set_log_sink(const LogSink &sink);

// Whether a message of `level` would go anywhere: one acquire load, no lock. For a source whose message
// costs something to make.
bool log_wanted(rig_log_level level) noexcept;

// Says one line (printf-style, no newline) at `level` to the sink. Holds no lock: the caller may hold
// any of rig's; the sink's callback runs on this thread, and stderr's write takes only stdio's own lock.
[[gnu::format(printf, 2, 3)]] void say(rig_log_level level, const char *format, ...) noexcept;

}  // namespace rig
