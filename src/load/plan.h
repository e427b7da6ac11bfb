// The plan of a load: the selected tensors placed on the placement's devices, and the file's selected byte
// ranges cut into chunks (staged path) or windows (registered and direct paths), each holding pieces of
// tensors bound for one device, in file order.
#pragma once

#include <rig_load.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "load/slice.h"
#include "load/table.h"

namespace rig::load {

inline uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// A part of a selected tensor as placed (the whole tensor, or a slice of it on one device): where its bytes
// are in the file and which placement positions hold it.
struct Placed {
  size_t index;                 // in the file
  uint64_t offset, length;      // the extent's first byte and its length (the part's buffer's)
  Extent extent;
  std::vector<size_t> devices;  // placement positions, primary first (a slice: its one device)
  rig_load_slice slice{};       // what rig_load_slice_get answers
};

// The selection (`selected`: `count` file indices, or null for every tensor of `tensors`) placed on
// `device_count` devices, in selection order, a tensor's parts next to each other: a tensor named by
// placement.slices as they say, else one matching a split in device_count parts, else whole by the rule.
// RIG_INVALID_ARGUMENT with words for an unknown rule, RULE_MASKS without masks or a mask naming no device,
// an index past the file or a tensor selected twice, a slice naming a tensor not selected or a device past
// the count or a tensor and device twice, and every bad slice slice.h names. Pure: no lock, no wait.
rig_status place(const std::vector<TensorEntry> &tensors, const size_t *selected, size_t count,
                 const rig_load_placement &placement, size_t device_count, std::vector<Placed> *out);

// The positions (in `placed`) of the tensors placed on `device`, in file order, and their lengths: the
// layout of that device's arenas (load/arenas.h).
void arena_order(const std::vector<Placed> &placed, size_t device, std::vector<size_t> *order,
                 std::vector<uint64_t> *lengths);

struct Piece {
  size_t tensor;         // position in the load's selection
  uint64_t tensor_offset;
  uint64_t chunk_offset;  // from the chunk's start
  uint64_t length;
};

// A stretch of the stream a gathered chunk reads, to `chunk_offset` of the chunk.
struct Segment {
  uint64_t at, chunk_offset, length;
};

struct Chunk {
  size_t device;     // placement position of the device whose copies read this chunk
  uint64_t start;    // stream offset (load/file.h), aligned down to the plan's alignment
  uint64_t end;      // end of the last piece
  std::vector<Piece> pieces;
  uint32_t shard = 0;  // the checkpoint's file it lies in
  // A gathered chunk (a slice along a later dim): the runs it reads, packed back to back from its start, so
  // that its one piece is copied at once; [start, end) then only spans them. Empty: [start, end) is read.
  std::vector<Segment> gather;
  uint64_t packed = 0;  // a gathered chunk's bytes
  uint64_t bytes() const { return gather.empty() ? end - start : packed; }
};

struct PlanTensor {
  Extent extent;  // where its bytes lie (several runs: a slice along a later dim)
  size_t device;  // the primary device: the one that receives the bytes from the file
  uint32_t shard = 0;  // the checkpoint's file that holds it: a chunk never spans two (a read, a window)
};

// Cuts the tensors (any order) into chunks of at most `chunk_bytes` starting on multiples of `align`
// (1 for buffered reads; 4096 for O_DIRECT; 64 KiB for windows). A chunk never mixes devices; bytes
// between pieces of one chunk (unselected tensors) are read with it rather than splitting it; a chunk
// never mixes shards either. A tensor of several runs gets gathered chunks of its own, its runs packed in
// order (a run longer than a chunk's room split over two), unaligned: the windows never take one.
std::vector<Chunk> make_plan(const std::vector<PlanTensor> &tensors, uint64_t chunk_bytes, uint64_t align);

}  // namespace rig::load
