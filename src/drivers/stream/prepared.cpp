#include "drivers/stream/prepared.h"

#include <algorithm>
#include <cstdint>

namespace rig::stream {

const char *call_name(const CallNames &names, const PreparedCall &call) {
  switch (call.kind) {
    case RIG_PART_COPY: return names.copy_async;
    case RIG_PART_FILL: return names.fill_async;
    case RIG_PART_LAUNCH: return names.launch;
    default: return "a part this device cannot run";
  }
}

namespace {

// The first seam of `m` past `at` (offsets in m), or SIZE_MAX where none is.
size_t next_seam(const Memory &m, size_t at) {
  const size_t *end = m.seams + m.seam_count;
  const size_t *s = std::upper_bound(m.seams, end, at);
  return s == end ? SIZE_MAX : *s;
}

}  // namespace

// A copy whose host range crosses registrations (Memory::seams) becomes one call per registration, in
// order, in this hand-over: the driver copies through one registration at a time, and the pieces run in
// stream order, so the copy is ordered as one. Without seams (the common case) it stays one call.
void Prepared::prepare_copy(PreparedCall c, const Memory &src, size_t src_at, const Memory &dst, size_t dst_at,
                            size_t length) {
  size_t done = 0;
  while (done < length) {
    size_t piece = length - done;
    if (src.seam_count) piece = std::min(piece, next_seam(src, src_at + done) - (src_at + done));
    if (dst.seam_count) piece = std::min(piece, next_seam(dst, dst_at + done) - (dst_at + done));
    c.src = src.address + src_at + done;
    c.dst = dst.address + dst_at + done;
    c.length = piece;
    calls_.push_back(c);
    done += piece;
  }
}

void Prepared::prepare(const Work &work) {
  calls_.clear();
  size_t launches = 0;
  for (const Part &part : work.parts) {
    PreparedCall c{};
    c.kind = part.kind;
    switch (part.kind) {
      case RIG_PART_COPY: {
        const Binding &src = work.slots[part.src_slot];
        const Binding &dst = work.slots[part.dst_slot];
        size_t length = part.length == RIG_WHOLE ? src.length - part.src_offset : part.length;
        prepare_copy(c, *src.memory, src.offset + part.src_offset, *dst.memory, dst.offset + part.dst_offset,
                     length);
        continue;
      }
      case RIG_PART_FILL: {
        const Binding &dst = work.slots[part.dst_slot];
        c.length = part.length == RIG_WHOLE ? dst.length - part.dst_offset : part.length;
        c.dst = dst.memory->address + dst.offset + part.dst_offset;
        c.byte = part.byte;
        if (c.length == 0) continue;
        break;
      }
      case RIG_PART_LAUNCH: {
        if (blocks_.size() == launches) blocks_.emplace_back();
        std::vector<ParamWord> &b = blocks_[launches++];
        size_t n = part.slots.size(), pointers = n + (work.scalars.empty() ? 0 : 1);
        b.resize(pointers + n);
        for (size_t i = 0; i < n; ++i) {
          const Binding &s = work.slots[part.slots[i]];
          b[pointers + i].address = s.memory ? s.memory->address + s.offset : 0;
          b[i].param = &b[pointers + i].address;
        }
        // The driver reads a parameter through its pointer: the scalars block is the parameter itself.
        if (!work.scalars.empty()) b[n].param = const_cast<std::byte *>(work.scalars.data());
        c.function = reinterpret_cast<Function>(part.function);
        for (int k = 0; k < 3; ++k) c.grid[k] = part.grid[k], c.block[k] = part.block[k];
        c.shared_bytes = part.shared_bytes;
        c.params = pointers ? &b[0].param : nullptr;
        break;
      }
      default:
        break;  // check_part refused every other kind before a run existed; enqueue() refuses it too
    }
    calls_.push_back(c);
  }
}

}  // namespace rig::stream
