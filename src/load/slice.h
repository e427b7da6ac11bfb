// Tensor-parallel slices (rig_load.h): where a slice of a tensor lies in the file, and how a split rule cuts
// a tensor into parts. Pure arithmetic over the tensor table: no rig state, no lock, no wait.
#pragma once

#include <rig_load.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "load/table.h"

namespace rig::load {

// The stream bytes of a part of a tensor: `count` runs of `run` bytes, `stride` apart from `offset`, which
// the part's buffer holds back to back in that order. A whole tensor, or a slice along its first dim, is
// one run (count 1); a slice along a later dim is one run per index of the dims before it.
struct Extent {
  uint64_t offset = 0, run = 0, stride = 0, count = 1;
  uint64_t length() const { return run * count; }
};

// The whole of tensor `e`.
Extent whole(const TensorEntry &e);

// The extent of [s.start, s.end) along s.dim of tensor `e` (s.tensor and s.device are not read).
// RIG_INVALID_ARGUMENT naming the tensor for start >= end, end past the dim, a dim past the rank, and a
// slice of a ggml block type along its last dim that does not fall on whole blocks. Sets rig's message.
rig_status slice_extent(const TensorEntry &e, const rig_load_slice &s, Extent *out);

// Tensor `e` split along `dim` into `parts` parts (rig_load_split: the first shape[dim] % parts one longer),
// part k into (*out)[k] with tensor and device left 0. RIG_INVALID_ARGUMENT naming the tensor for a dim past
// the rank or shorter than `parts`. Sets rig's message.
rig_status split_parts(const TensorEntry &e, uint32_t dim, size_t parts, std::vector<rig_load_slice> *out);

// The first of `splits` whose pattern matches `name` (fnmatch, no flags), or null.
const rig_load_split *split_of(const rig_load_split *splits, size_t count, const std::string &name);

}  // namespace rig::load
