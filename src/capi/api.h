// What every C entry point shares, in the one order every face follows: check the arguments, pin the
// handles, call the module below (core, interop, mapped, load), give the new object its handle. Each message
// starts with the call's name without its rig_ prefix ("buffer_view: ..."), as `what` below.
#pragma once

#include <rig.h>

#include <exception>
#include <new>

#include "capi/devices.h"
#include "capi/handles.h"
#include "core/buffer.h"
#include "core/device.h"
#include "core/error.h"
#include "core/status.h"
#include "core/submission.h"

namespace rig::capi {

// A failure whose path set no message says what its status means (core/status.h): no status leaves
// without words.
[[gnu::cold, gnu::noinline]] inline rig_status unexplained(const char *what, rig_status s) noexcept {
  return fail(s, "%s: %s", what, status_meaning(s));
}

// Runs the body of a C function: no C++ exception ever crosses the ABI. For rig_submit, the one hot entry,
// whose every failure below sets its own message (the pin's refusal, the run's readiness, a lost device,
// each rule's wait); every other entry goes through entry() below.
template <class F>
[[gnu::always_inline]] inline rig_status entry_explained(const char *what, F &&body) noexcept {
  clear_error();
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(RIG_OUT_OF_MEMORY, "%s: out of host memory", what);
  } catch (const std::exception &e) {
    return fail(RIG_DRIVER, "%s: %s", what, e.what());
  } catch (...) {
    return fail(RIG_DRIVER, "%s: unexpected failure", what);
  }
}

// entry_explained, and no failure leaves without a message. rig_submit skips this check: on a chained copy it
// is two instructions of about 1170 (callgrind, bench/README.md's bench/core).
template <class F>
rig_status entry(const char *what, F &&body) noexcept {
  return entry_explained(what, [&] {
    rig_status s = body();
    if (s != RIG_OK && !error_set) [[unlikely]]
      return unexplained(what, s);
    return s;
  });
}

inline Pinned<Device> pin_device(rig_device d, const char *what) { return {word_of(d), Kind::device, what}; }
inline Pinned<Buffer> pin_buffer(rig_buffer b, const char *what) { return {word_of(b), Kind::buffer, what}; }

// Stores a new object and writes its handle; RIG_OUT_OF_MEMORY if the table is full.
template <class H, class T>
rig_status give(Kind kind, std::shared_ptr<T> object, H *out) {
  uint64_t word = insert(kind, std::move(object));
  if (!word) return RIG_OUT_OF_MEMORY;
  *out = handle_of<H>(word);
  return RIG_OK;
}

#define RIG_REQUIRE_OUT(ptr, what) \
  if (!(ptr)) return ::rig::fail(RIG_INVALID_ARGUMENT, "%s: null output pointer", what)

}  // namespace rig::capi
