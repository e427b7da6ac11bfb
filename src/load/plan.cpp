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

// The per-tensor slices by file index, each checked against the selection and the devices.
rig_status slices_by_tensor(const rig_load_placement &placement, const std::vector<bool> &taken,
                            size_t device_count, std::vector<std::vector<const rig_load_slice *>> *out) {
  if (placement.slice_count && !placement.slices) return fail(RIG_INVALID_ARGUMENT, "slice_count without slices");
  out->assign(taken.size(), {});
  for (size_t i = 0; i < placement.slice_count; ++i) {
    const rig_load_slice &s = placement.slices[i];
    if (s.tensor >= taken.size() || !taken[s.tensor])
      return fail(RIG_INVALID_ARGUMENT, "slice %zu names tensor %zu, which is not selected", i, s.tensor);
    if (s.device >= device_count)
      return fail(RIG_INVALID_ARGUMENT, "slice %zu names placement device %zu of %zu", i, s.device, device_count);
    for (const rig_load_slice *o : (*out)[s.tensor])
      if (o->device == s.device)
        return fail(RIG_INVALID_ARGUMENT, "slice %zu gives tensor %zu a second slice on placement device %zu", i,
                    s.tensor, s.device);
    (*out)[s.tensor].push_back(&s);
  }
  return RIG_OK;
}

// A part of tensor `index` (entry `e`): slice `s` on its device.
rig_status sliced(size_t index, const TensorEntry &e, rig_load_slice s, Placed *out) {
  s.tensor = index;
  Extent x;
  if (rig_status st = slice_extent(e, s, &x)) return st;
  *out = Placed{index, x.offset, x.length(), x, {s.device}, s};
  return RIG_OK;
}

}  // namespace

rig_status place(const std::vector<TensorEntry> &tensors, const size_t *selected, size_t count,
                 const rig_load_placement &placement, size_t device_count, std::vector<Placed> *out) {
  if (placement.rule != RIG_LOAD_RULE_EACH && placement.rule != RIG_LOAD_RULE_BY_LAYER && placement.rule != RIG_LOAD_RULE_MASKS)
    return fail(RIG_INVALID_ARGUMENT, "unknown placement rule %d", int(placement.rule));
  if (placement.rule == RIG_LOAD_RULE_MASKS && !placement.masks) return fail(RIG_INVALID_ARGUMENT, "RULE_MASKS without masks");
  if (placement.split_count && !placement.splits) return fail(RIG_INVALID_ARGUMENT, "split_count without splits");
  const size_t n = selected ? count : tensors.size();
  std::vector<bool> taken(tensors.size());
  for (size_t i = 0; i < n; ++i) {
    size_t index = selected ? selected[i] : i;
    if (index >= tensors.size()) return fail(RIG_INVALID_ARGUMENT, "tensor index %zu: the file has %zu", index, tensors.size());
    if (taken[index]) return fail(RIG_INVALID_ARGUMENT, "tensor %zu is selected twice", index);
    taken[index] = true;
  }
  std::vector<std::vector<const rig_load_slice *>> slices;
  if (rig_status s = slices_by_tensor(placement, taken, device_count, &slices)) return s;
  long long max_layer = -1;
  for (const auto &t : tensors) max_layer = std::max(max_layer, layer_of(t.name));
  out->clear();
  std::vector<rig_load_slice> parts;
  for (size_t i = 0; i < n; ++i) {
    size_t index = selected ? selected[i] : i;
    const TensorEntry &e = tensors[index];
    parts.clear();
    for (const rig_load_slice *s : slices[index]) parts.push_back(*s);
    if (parts.empty())
      if (const rig_load_split *split = split_of(placement.splits, placement.split_count, e.name)) {
        if (rig_status s = split_parts(e, split->dim, device_count, &parts)) return s;
        for (size_t d = 0; d < parts.size(); ++d) parts[d].device = d;
      }
    for (const rig_load_slice &part : parts) {
      out->emplace_back();
      if (rig_status s = sliced(index, e, part, &out->back())) return s;
    }
    if (!parts.empty()) continue;
    Placed p{index, e.offset, e.length, whole(e), {}, {}};
    p.slice = rig_load_slice{index, 0, 0, 0, e.shape.empty() ? 1 : e.shape[0]};
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

namespace {

// Tensor `i`'s runs (t.extent.count > 1) packed into gathered chunks of at most `chunk_bytes`, in order.
void gather(const PlanTensor &t, size_t i, uint64_t chunk_bytes, std::vector<Chunk> *chunks) {
  const Extent &x = t.extent;
  Chunk *c = nullptr;
  for (uint64_t r = 0; r < x.count; ++r)
    for (uint64_t at = x.offset + r * x.stride, left = x.run; left;) {
      if (!c || c->packed == chunk_bytes) {
        uint64_t done = r * x.run + (x.run - left);  // the part's bytes before this chunk
        chunks->push_back(Chunk{t.device, at, at, {Piece{i, done, 0, 0}}, t.shard, {}, 0});
        c = &chunks->back();
      }
      uint64_t take = std::min(left, chunk_bytes - c->packed);
      c->gather.push_back(Segment{at, c->packed, take});
      c->packed += take;
      c->pieces[0].length += take;
      c->end = at + take;
      at += take, left -= take;
    }
}

}  // namespace

std::vector<Chunk> make_plan(const std::vector<PlanTensor> &tensors, uint64_t chunk_bytes, uint64_t align) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors[a].extent.offset < tensors[b].extent.offset; });
  std::vector<Chunk> chunks;
  uint32_t shard = 0;
  for (size_t i : order) {
    const PlanTensor &t = tensors[i];
    if (t.extent.count > 1) {
      gather(t, i, chunk_bytes, &chunks);
      continue;
    }
    uint64_t pos = t.extent.offset, end = t.extent.offset + t.extent.length();
    while (pos < end) {
      Chunk *c = chunks.empty() ? nullptr : &chunks.back();
      if (!c || !c->gather.empty() || c->device != t.device || t.shard != shard || pos >= c->start + chunk_bytes) {
        shard = t.shard;
        chunks.push_back(Chunk{t.device, pos / align * align, pos, {}, t.shard, {}, 0});
        c = &chunks.back();
      }
      uint64_t take = std::min(end, c->start + chunk_bytes) - pos;
      c->pieces.push_back(Piece{i, pos - t.extent.offset, pos - c->start, take});
      pos += take;
      c->end = pos;
    }
  }
  return chunks;
}

}  // namespace rig::load
