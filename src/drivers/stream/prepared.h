// A run's parts as the stream calls that enqueue them, every address resolved from the run's bindings: what
// a hand-over would work out from the Work each time. A recorded hand-over (drivers/stream/recorded.cpp)
// keeps one made when the run's buffers were set; the general hand-over prepares one into storage the
// device reuses. Both enqueue through StreamDevice::hand_over_prepared, so there is one enqueue path.
#pragma once

#include <rig.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/driver_work.h"
#include "drivers/stream/calls.h"

namespace rig::stream {

// One part's call: cuMemcpyAsync, cuMemsetD8Async or cuLaunchKernel with its arguments but the stream. One
// cache line: a hand-over reads it right after a driver's call has pushed rig's lines out of the nearest
// caches, and a launch's fields spread over two lines cost a second miss on every kernel (bench/README.md,
// "What rig's own time is made of"). A copy never reads a launch's fields nor a launch a copy's, so the
// pointers of each share their place (anonymous unions, read only as the kind wrote them).
struct alignas(64) PreparedCall {
  rig_part_kind kind;
  unsigned shared_bytes;  // launch
  union {
    DevicePtr dst;      // copy, fill
    Function function;  // launch
  };
  union {
    DevicePtr src;  // copy
    void **params;  // launch: its parameter block (Prepared's storage), or null with no parameters
  };
  size_t length;  // copy, fill
  unsigned grid[3], block[3];  // launch
  unsigned char byte;          // fill
};
static_assert(sizeof(PreparedCall) == 64);

// Enqueues `call` on `stream`: the family's result.
[[gnu::hot]] inline Result enqueue(const Calls &calls, Stream stream, const PreparedCall &call) {
  switch (call.kind) {
    case RIG_PART_COPY:
      return calls.copy_async(call.dst, call.src, call.length, stream);
    case RIG_PART_FILL:
      return calls.fill_async(call.dst, call.byte, call.length, stream);
    case RIG_PART_LAUNCH:
      return calls.launch(call.function, call.grid[0], call.grid[1], call.grid[2], call.block[0], call.block[1],
                          call.block[2], call.shared_bytes, stream, call.params, nullptr);
    default:
      return ERROR_NOT_SUPPORTED;  // check_part refused it; never reached
  }
}

// The vendor's name of `call`'s entry point, for the message of a failed enqueue.
const char *call_name(const CallNames &names, const PreparedCall &call);

class Prepared {
 public:
  // Makes the calls of `work`'s parts (their kinds checked by check_part, their ranges by the engine): a
  // copy or fill of 0 bytes makes none; a copy across registrations (Memory::seams) makes one a piece. A
  // launch's parameter block holds each launch slot's device address, then a pointer to the work's scalars
  // as one block (a struct parameter): the calls point into this object's storage and into the work's
  // scalars, so they are valid while both are. Storage grows to the largest work and is reused after (no
  // allocation once grown); throws std::bad_alloc where it cannot grow.
  void prepare(const Work &work);
  std::span<const PreparedCall> calls() const { return calls_; }

 private:
  // Appends `c` as a copy of `length` bytes from src_at in src to dst_at in dst: one call, or one per
  // registration where the range crosses seams. None for 0 bytes.
  void prepare_copy(PreparedCall c, const Memory &src, size_t src_at, const Memory &dst, size_t dst_at,
                    size_t length);
  // A launch's parameter block in one allocation: the pointers the driver reads (`params` points at the
  // first), then the slots' device addresses they point to (the scalars' pointer, last of the pointers,
  // points into the work). A small launch's block is one line, where two vectors put it on two: one miss
  // fewer of the driver's on every launch.
  union ParamWord {
    void *param;
    DevicePtr address;
  };
  static_assert(sizeof(ParamWord) == sizeof(void *));
  std::vector<PreparedCall> calls_;
  std::vector<std::vector<ParamWord>> blocks_;  // one per launch, in order; never shrunk
};

}  // namespace rig::stream
