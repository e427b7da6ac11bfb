// The thread-local last error behind rig_last_error(). Every failing path inside rig calls fail(), so a
// status never leaves the library without words saying why.
#pragma once

#include <rig.h>

namespace rig {

// Records the message (printf-style) for this thread and returns `status`, so `return fail(...)` reads well.
[[gnu::cold, gnu::format(printf, 2, 3)]] rig_status fail(rig_status status, const char *format, ...) noexcept;
// Clears the message: called at the entry of every C function.
[[gnu::hot]] void clear_error() noexcept;
// The current message ("" when none).
const char *last_error() noexcept;

}  // namespace rig
