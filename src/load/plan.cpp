#include "load/plan.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>

#include "core/error.h"

namespace rig::load {
namespace {

// A name's layer for RIG_LOAD_RULE_BY_LAYER: the first ".N." (or a trailing ".N") number; -1 if none.
long long layer_of(const std::string &name) {
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '.' || i + 1 >= name.size() || !isdigit(static_cast<unsigned char>(name[i + 1]))) continue;
    size_t j = i + 1;
    long long n = 0;
    while (j < name.size() && isdigit(static_cast<unsigned char>(name[j])) && n < 100000000) n = n * 10 + (name[j++] - '0');
    if (j == name.size() || name[j] == '.') return n;
  }
  return -1;
}

// The placement positions of the selection's tensor `i` (file entry `e`) by the placement's rule.
rig_status devices_of(const rig_load_placement &placement, size_t device_count, long long max_layer, size_t i,
                      const TensorEntry &e, std::vector<size_t> *out) {
  switch (placement.rule) {
    case RIG_LOAD_RULE_EACH:
      for (size_t d = 0; d < device_count; ++d) out->push_back(d);
      return RIG_OK;
    case RIG_LOAD_RULE_BY_LAYER: {
      long long layer = layer_of(e.name);
      out->push_back(layer < 0 ? 0 : size_t(layer * (long long)device_count / (max_layer + 1)));
      return RIG_OK;
    }
    default: {
      uint64_t mask = placement.masks[i];
      if (!mask || (device_count < 64 && (mask >> device_count)))
        return fail(RIG_INVALID_ARGUMENT, "mask of selected tensor %zu names no device or one past device_count", i);
      for (size_t d = 0; d < device_count; ++d)
        if (mask >> d & 1) out->push_back(d);
      return RIG_OK;
    }
  }
}

}  // namespace

rig_status place(const std::vector<TensorEntry> &tensors, const size_t *selected, size_t count,
                 const rig_load_placement &placement, size_t device_count, std::vector<Placed> *out) {
  if (placement.rule != RIG_LOAD_RULE_EACH && placement.rule != RIG_LOAD_RULE_BY_LAYER && placement.rule != RIG_LOAD_RULE_MASKS)
    return fail(RIG_INVALID_ARGUMENT, "unknown placement rule %d", int(placement.rule));
  if (placement.rule == RIG_LOAD_RULE_MASKS && !placement.masks) return fail(RIG_INVALID_ARGUMENT, "RULE_MASKS without masks");
  const size_t n = selected ? count : tensors.size();
  std::vector<bool> taken(tensors.size());
  long long max_layer = -1;
  for (const auto &t : tensors) max_layer = std::max(max_layer, layer_of(t.name));
  out->clear();
  for (size_t i = 0; i < n; ++i) {
    size_t index = selected ? selected[i] : i;
    if (index >= tensors.size()) return fail(RIG_INVALID_ARGUMENT, "tensor index %zu: the file has %zu", index, tensors.size());
    if (taken[index]) return fail(RIG_INVALID_ARGUMENT, "tensor %zu is selected twice", index);
    taken[index] = true;
    const TensorEntry &e = tensors[index];
    Placed p{index, e.offset, e.length, {}};
    if (rig_status s = devices_of(placement, device_count, max_layer, i, e, &p.devices)) return s;
    out->push_back(std::move(p));
  }
  return RIG_OK;
}

void arena_order(const std::vector<Placed> &placed, size_t device, std::vector<size_t> *order,
                 std::vector<uint64_t> *lengths) {
  std::vector<size_t> by_offset(placed.size());
  std::iota(by_offset.begin(), by_offset.end(), 0);
  std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) { return placed[a].offset < placed[b].offset; });
  for (size_t i : by_offset)
    for (size_t on : placed[i].devices)
      if (on == device) order->push_back(i), lengths->push_back(placed[i].length);
}

std::vector<Chunk> make_plan(const std::vector<PlanTensor> &tensors, uint64_t chunk_bytes, uint64_t align) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  std::vector<Chunk> chunks;
  uint32_t shard = 0;
  for (size_t i : order) {
    const PlanTensor &t = tensors[i];
    uint64_t pos = t.offset, end = t.offset + t.length;
    while (pos < end) {
      Chunk *c = chunks.empty() ? nullptr : &chunks.back();
      if (!c || c->device != t.device || t.shard != shard || pos >= c->start + chunk_bytes) {
        shard = t.shard;
        chunks.push_back(Chunk{t.device, pos / align * align, pos, {}, t.shard});
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
