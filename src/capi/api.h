// What every C entry point shares: clear the message, catch every exception, pin handles.
#pragma once

#include <rig.h>

#include <exception>
#include <new>

#include "capi/devices.h"
#include "capi/handles.h"
#include "core/buffer.h"
#include "core/device.h"
#include "core/error.h"
#include "core/submission.h"

namespace rig::capi {

// Runs the body of a C function: no C++ exception ever crosses the ABI.
template <class F>
rig_status entry(const char *what, F &&body) noexcept {
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
  if (!(ptr)) return fail(RIG_INVALID_ARGUMENT, "%s: null output pointer", what)

}  // namespace rig::capi
