// The plan of a load: the file's selected byte ranges cut into chunks (staged path) or windows (registered
// and direct paths), each holding pieces of tensors bound for one device, in file order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rig::load {

struct Piece {
  size_t tensor;         // position in the load's selection
  uint64_t tensor_offset;
  uint64_t chunk_offset;  // from the chunk's start
  uint64_t length;
};

struct Chunk {
  size_t device;     // placement position of the device whose copies read this chunk
  uint64_t start;    // file offset, aligned down to the plan's alignment
  uint64_t end;      // end of the last piece
  std::vector<Piece> pieces;
};

struct PlanTensor {
  uint64_t offset, length;
  size_t device;  // the primary device: the one that receives the bytes from the file
};

// Cuts the tensors (any order) into chunks of at most `chunk_bytes` starting on multiples of `align`
// (1 for buffered reads; 4096 for O_DIRECT; 64 KiB for windows). A chunk never mixes devices; bytes
// between pieces of one chunk (unselected tensors) are read with it rather than splitting it.
std::vector<Chunk> make_plan(const std::vector<PlanTensor> &tensors, uint64_t chunk_bytes, uint64_t align);

}  // namespace rig::load
