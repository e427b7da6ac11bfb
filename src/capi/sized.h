// Structs the caller sizes (rig.h: "Structs that may grow start with a size field"), read and written by one
// pair of functions, so that every face serves every version alike: an older caller's smaller struct is
// served (the fields it lacks read as zero, their defaults; the fields we have and it lacks are not
// written), a newer caller's larger struct is accepted (read up to our last field; the fields we lack are
// written as zero). Copy the smaller of the two sizes, zero the rest.
#pragma once

#include <rig.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "core/error.h"

namespace rig::capi {

// The caller's struct `in` as ours in *out: min(in.size, sizeof(T)) bytes of it over zeroes, out->size our
// size. `least` is the size of the struct's first version (every caller sets at least its fields): a
// smaller size is refused with RIG_INVALID_ARGUMENT, named "`call`: `field`->size". Never blocks.
template <class T>
rig_status read_sized(const T &in, size_t least, const char *call, const char *field, T *out) {
  static_assert(std::is_trivially_copyable_v<T> && offsetof(T, size) == 0, "a sized struct starts with its size");
  if (in.size < least)
    return fail(RIG_INVALID_ARGUMENT, "%s: %s->size is %zu, below %zu: set it to the struct's sizeof", call, field,
                in.size, least);
  std::memset(static_cast<void *>(out), 0, sizeof(T));
  std::memcpy(static_cast<void *>(out), &in, std::min(in.size, sizeof(T)));
  out->size = sizeof(T);
  return RIG_OK;
}

// Writes *ours into the caller's struct `out` (out->size set by the caller, kept): min(out->size, sizeof(T))
// bytes of ours, then zeroes up to the caller's size. A size below the size field itself is refused with
// RIG_INVALID_ARGUMENT, named "`call`: `field`->size", and nothing is written. Never blocks.
template <class T>
rig_status write_sized(const T &ours, const char *call, const char *field, T *out) {
  static_assert(std::is_trivially_copyable_v<T> && offsetof(T, size) == 0, "a sized struct starts with its size");
  size_t theirs = out->size;
  if (theirs < sizeof(size_t))
    return fail(RIG_INVALID_ARGUMENT, "%s: %s->size is %zu, below the size field itself: set it to the struct's sizeof",
                call, field, theirs);
  std::memcpy(static_cast<void *>(out), &ours, std::min(theirs, sizeof(T)));
  if (theirs > sizeof(T)) std::memset(reinterpret_cast<char *>(out) + sizeof(T), 0, theirs - sizeof(T));
  out->size = theirs;
  return RIG_OK;
}

}  // namespace rig::capi
