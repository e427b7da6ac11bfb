// The thread-local last error behind rig_last_error(). Every failing path inside rig calls fail(), so a
// status never leaves the library without words saying why.
#pragma once

#include <rig.h>

namespace rig {

// Records the message (printf-style) for this thread and returns `status`, so `return fail(...)` reads well.
[[gnu::cold, gnu::format(printf, 2, 3)]] rig_status fail(rig_status status, const char *format, ...) noexcept;
// Whether this thread's message holds a failure. One byte in the initial-exec TLS model, so that clearing
// it at every C entry is one store rather than a call to __tls_get_addr (cold code in ld.so, on a GPU's
// submit path). The 512-byte message itself stays in the dynamic model: a dlopen'd library may take only
// a little static TLS.
// constinit is required, not decoration: without it every use outside error.cpp goes through the C++
// thread_local wrapper (a test of the weak `TLS init function` symbol, then the address as a reference).
// That costs a GOT load and a branch per entry, and under -fsanitize=null GCC 12 tests the reference for
// null with the flags of `addq error_set@gottpoff(%rip), %reg`, which ld rewrites to a flag-less `leaq`
// when it links the archive into an executable: the test then reads stale flags and UBSan reports a
// store to a null pointer that never happens (bench/README.md, "Issue 14: the UBSan report").
[[gnu::tls_model("initial-exec")]] extern thread_local constinit bool error_set;
// Clears the message: called at the entry of every C function.
inline void clear_error() noexcept { error_set = false; }
// The current message ("" when none).
const char *last_error() noexcept;

}  // namespace rig
