#include "load/arenas.h"

#include "core/allocation.h"
#include "core/buffer.h"

namespace rig::load {

Arenas::Arenas(size_t positions, const std::vector<size_t> &order, const std::vector<uint64_t> &lengths,
               uint64_t limit, rig_memory memory)
    : memory_(memory), places_(positions) {
  for (size_t i = 0; i < order.size(); ++i) {
    uint64_t length = lengths[i];
    if (!length) continue;
    uint64_t start = arenas_.empty() ? 0 : (arenas_.back().length + kAlign - 1) / kAlign * kAlign;
    if (arenas_.empty() || start + length > limit) {
      arenas_.emplace_back();
      start = 0;
    }
    arenas_.back().length = start + length;
    places_[order[i]] = {arenas_.size() - 1, start, length};
  }
}

Arenas::~Arenas() = default;

rig_status Arenas::make(Device &device, size_t position, std::shared_ptr<Buffer> *out) {
  const Place &p = places_[position];
  if (p.arena == SIZE_MAX) return RIG_UNSUPPORTED;
  std::shared_ptr<Allocation> whole;
  {
    std::lock_guard hold(lock_);
    Arena &a = arenas_[p.arena];
    if (a.refused) return RIG_UNSUPPORTED;
    uint64_t bytes = a.length > kPage ? (a.length + kPage - 1) / kPage * kPage : a.length;
    if (!a.whole && allocation_create(device, bytes, memory_, &a.whole) != RIG_OK) {
      a.refused = true;  // its tensors are made whole, each saying why where it fails as well
      return RIG_UNSUPPORTED;
    }
    whole = a.whole;
  }
  return buffer_part(whole, p.start, p.length, out);
}

bool Arenas::place(size_t position, size_t *arena, uint64_t *start) const {
  const Place &p = places_[position];
  if (p.arena == SIZE_MAX) return false;
  *arena = p.arena;
  *start = p.start;
  return true;
}

std::shared_ptr<Allocation> Arenas::whole(size_t index) {
  std::lock_guard hold(lock_);
  return arenas_[index].whole;
}

}  // namespace rig::load
