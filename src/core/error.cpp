#include "core/error.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "core/deadline.h"

namespace rig {

std::atomic<bool> interrupt_waits{false};

[[gnu::tls_model("initial-exec")]] constinit thread_local bool error_set = false;

namespace {
// One message per thread: rig.h promises rig_last_error a thread-local message.
thread_local char message[512];
}  // namespace

rig_status fail(rig_status status, const char *format, ...) noexcept {
  // Formatted aside first: callers pass last_error() itself as an argument ("...: %s", last_error()).
  char formatted[sizeof message];
  va_list args;
  va_start(args, format);
  std::vsnprintf(formatted, sizeof formatted, format, args);
  va_end(args);
  std::memcpy(message, formatted, sizeof message);
  error_set = true;
  return status;
}

const char *last_error() noexcept { return error_set ? message : ""; }

}  // namespace rig
