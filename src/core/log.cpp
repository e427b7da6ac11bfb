#include "core/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <forward_list>
#include <mutex>

namespace rig {
namespace {

const LogSink kStderr{nullptr, nullptr, RIG_LOG_DEBUG};

// A sink, once published, is never freed: a message on another thread may still be reading it after a
// later rig_set_log returns, and sinks are too rare to need more than keeping them. Equal sinks are kept
// once, so a program switching between a few sinks holds a few.
std::mutex sinks_lock;
std::forward_list<LogSink> sinks;  // nodes never move: their addresses are what `current` publishes

// Acquire/release: a reader sees the sink's fields as set_log_sink wrote them before publishing it.
std::atomic<const LogSink *> current{&kStderr};

bool same(const LogSink &a, const LogSink &b) {
  return a.fn == b.fn && a.user == b.user && a.min_level == b.min_level;
}

void deliver(const LogSink &sink, rig_log_level level, const char *message) {
  if (sink.fn)
    sink.fn(sink.user, level, message);
  else
    std::fprintf(stderr, "%s\n", message);  // one call: stdio's lock keeps lines of several threads whole
}

}  // namespace

void set_log_sink(const LogSink &sink) {
  if (same(sink, kStderr)) {
    current.store(&kStderr, std::memory_order_release);
    return;
  }
  std::lock_guard<std::mutex> hold(sinks_lock);
  for (const LogSink &kept : sinks)
    if (same(kept, sink)) {
      current.store(&kept, std::memory_order_release);
      return;
    }
  sinks.push_front(sink);
  current.store(&sinks.front(), std::memory_order_release);
}

bool log_wanted(rig_log_level level) noexcept {
  return level >= current.load(std::memory_order_acquire)->min_level;
}

void say(rig_log_level level, const char *format, ...) noexcept {
  const LogSink &sink = *current.load(std::memory_order_acquire);
  if (level < sink.min_level) return;
  char line[1024];
  va_list ap;
  va_start(ap, format);
  int n = std::vsnprintf(line, sizeof line, format, ap);
  va_end(ap);
  if (n < 0) return;
  if (size_t(n) < sizeof line) return deliver(sink, level, line);
  // A longer line (a validation layer's message can be): made on the heap, or cut where that fails.
  char *whole = static_cast<char *>(std::malloc(size_t(n) + 1));
  if (!whole) return deliver(sink, level, line);
  va_start(ap, format);
  std::vsnprintf(whole, size_t(n) + 1, format, ap);
  va_end(ap);
  deliver(sink, level, whole);
  std::free(whole);
}

}  // namespace rig
