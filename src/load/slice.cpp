#include "load/slice.h"

#include <fnmatch.h>

#include <algorithm>

#include "core/error.h"

namespace rig::load {

Extent whole(const TensorEntry &e) { return Extent{e.offset, e.length, e.length, 1}; }

rig_status slice_extent(const TensorEntry &e, const rig_load_slice &s, Extent *out) {
  const char *name = e.name.c_str();
  const size_t rank = e.shape.size();
  if (s.dim >= rank)
    return fail(RIG_INVALID_ARGUMENT, "tensor '%s': a slice along dim %u, past its rank %zu", name, s.dim, rank);
  const uint64_t n = e.shape[s.dim];
  if (s.start >= s.end || s.end > n)
    return fail(RIG_INVALID_ARGUMENT, "tensor '%s': slice [%llu, %llu) along dim %u of %llu is empty or past its end",
                name, (unsigned long long)s.start, (unsigned long long)s.end, s.dim, (unsigned long long)n);
  // Along the last dim of a ggml block type the unit is a block: its bytes are not a whole number per element.
  uint64_t block = e.dtype == RIG_DTYPE_GGML && s.dim + 1 == rank ? ggml_block_elements(e.ggml_type) : 1;
  if (s.start % block || s.end % block)
    return fail(RIG_INVALID_ARGUMENT, "tensor '%s': slice [%llu, %llu) along its last dim does not fall on whole "
                "%s blocks of %llu elements", name, (unsigned long long)s.start, (unsigned long long)s.end,
                e.dtype_name.c_str(), (unsigned long long)block);
  uint64_t outer = 1;  // no overflow: the elements' count was checked at open
  for (uint32_t d = 0; d < s.dim; ++d) outer *= e.shape[d];
  const uint64_t units = n / block;
  // One unit along the dim: every element of the dims after it (a row's bytes for dim 0 of a matrix).
  const uint64_t unit_bytes = outer && units ? e.length / (outer * units) : 0;
  Extent x;
  x.offset = e.offset + s.start / block * unit_bytes;
  x.run = (s.end - s.start) / block * unit_bytes;
  x.stride = units * unit_bytes;
  x.count = outer;
  if (x.count <= 1 || x.run == x.stride) x = Extent{x.offset, x.run * x.count, x.run * x.count, 1};  // one range
  *out = x;
  return RIG_OK;
}

rig_status split_parts(const TensorEntry &e, uint32_t dim, size_t parts, std::vector<rig_load_slice> *out) {
  if (dim >= e.shape.size())
    return fail(RIG_INVALID_ARGUMENT, "tensor '%s': split along dim %u, past its rank %zu", e.name.c_str(), dim,
                e.shape.size());
  const uint64_t n = e.shape[dim];
  if (n < parts)
    return fail(RIG_INVALID_ARGUMENT, "tensor '%s': dim %u of %llu cannot give each of %zu devices a part",
                e.name.c_str(), dim, (unsigned long long)n, parts);
  const uint64_t q = n / parts, r = n % parts;
  out->clear();
  for (uint64_t k = 0; k < parts; ++k) {
    uint64_t start = k * q + std::min(k, r);
    out->push_back(rig_load_slice{0, 0, dim, start, start + q + (k < r ? 1 : 0)});
  }
  return RIG_OK;
}

const rig_load_split *split_of(const rig_load_split *splits, size_t count, const std::string &name) {
  for (size_t i = 0; i < count; ++i)
    if (splits[i].pattern && fnmatch(splits[i].pattern, name.c_str(), 0) == 0) return &splits[i];
  return nullptr;
}

}  // namespace rig::load
