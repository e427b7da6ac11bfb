#include "load/plan.h"

#include <algorithm>
#include <numeric>

namespace rig::load {

std::vector<Chunk> make_plan(const std::vector<PlanTensor> &tensors, uint64_t chunk_bytes, uint64_t align) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  std::vector<Chunk> chunks;
  for (size_t i : order) {
    const PlanTensor &t = tensors[i];
    uint64_t pos = t.offset, end = t.offset + t.length;
    while (pos < end) {
      Chunk *c = chunks.empty() ? nullptr : &chunks.back();
      if (!c || c->device != t.device || pos >= c->start + chunk_bytes) {
        chunks.push_back(Chunk{t.device, pos / align * align, pos, {}});
        c = &chunks.back();
      }
      uint64_t take = std::min(end, c->start + chunk_bytes) - pos;
      c->pieces.push_back(Piece{i, pos - t.offset, pos - c->start, take});
      pos += take;
      c->end = pos;
    }
  }
  return chunks;
}

}  // namespace rig::load
