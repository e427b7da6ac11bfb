#include "drivers/stream/prepared.h"

namespace rig::stream {

const char *call_name(const CallNames &names, const PreparedCall &call) {
  switch (call.kind) {
    case RIG_PART_COPY: return names.copy_async;
    case RIG_PART_FILL: return names.fill_async;
    case RIG_PART_LAUNCH: return names.launch;
    default: return "a part this device cannot run";
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
        c.length = part.length == RIG_WHOLE ? src.length - part.src_offset : part.length;
        c.dst = dst.memory->address + dst.offset + part.dst_offset;
        c.src = src.memory->address + src.offset + part.src_offset;
        if (c.length == 0) continue;  // nothing to enqueue
        break;
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
        ParamBlock &b = blocks_[launches++];
        size_t n = part.slots.size();
        b.addresses.resize(n);
        b.params.resize(n + (work.scalars.empty() ? 0 : 1));
        for (size_t i = 0; i < n; ++i) {
          const Binding &s = work.slots[part.slots[i]];
          b.addresses[i] = s.memory ? s.memory->address + s.offset : 0;
          b.params[i] = &b.addresses[i];
        }
        // The driver reads a parameter through its pointer: the scalars block is the parameter itself.
        if (!work.scalars.empty()) b.params[n] = const_cast<std::byte *>(work.scalars.data());
        c.function = reinterpret_cast<Function>(part.function);
        for (int k = 0; k < 3; ++k) c.grid[k] = part.grid[k], c.block[k] = part.block[k];
        c.shared_bytes = part.shared_bytes;
        c.params = b.params.empty() ? nullptr : b.params.data();
        break;
      }
      default:
        break;  // check_part refused every other kind before a run existed; enqueue() refuses it too
    }
    calls_.push_back(c);
  }
}

}  // namespace rig::stream
