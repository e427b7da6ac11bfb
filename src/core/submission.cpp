#include "core/submission.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "core/error.h"

namespace rig {
namespace {

constexpr size_t kMaxSlots = 256;
constexpr size_t kMaxScalars = 4096;

bool reads(rig_access a) { return a & RIG_ACCESS_READ; }
bool writes(rig_access a) { return a & RIG_ACCESS_WRITE; }

rig_status check_slot(uint32_t slot, size_t slot_count, size_t i, const char *role) {
  if (slot >= slot_count)
    return fail(RIG_INVALID_ARGUMENT, "submission: part %zu names %s slot %u of %zu", i, role, slot, slot_count);
  return RIG_OK;
}

}  // namespace

rig_status submission_make(Device &device, const rig_part *parts, size_t part_count, const rig_access *access,
                           size_t slot_count, std::vector<std::shared_ptr<Module>> modules,
                           std::shared_ptr<Submission> *out) {
  if (device.is_host()) return fail(RIG_UNSUPPORTED, "submission: the host runs no work");
  if (part_count && !parts) return fail(RIG_INVALID_ARGUMENT, "submission: null parts for %zu parts", part_count);
  if (slot_count && !access) return fail(RIG_INVALID_ARGUMENT, "submission: null slot accesses for %zu slots", slot_count);
  if (slot_count > kMaxSlots) return fail(RIG_INVALID_ARGUMENT, "submission: %zu slots (at most %zu)", slot_count, kMaxSlots);
  auto sub = std::make_shared<Submission>();
  sub->device = &device;
  sub->modules = std::move(modules);
  for (size_t i = 0; i < slot_count; ++i) {
    if (access[i] != RIG_ACCESS_READ && access[i] != RIG_ACCESS_WRITE && access[i] != RIG_ACCESS_READ_WRITE)
      return fail(RIG_INVALID_ARGUMENT, "submission: slot %zu has unknown access %d", i, static_cast<int>(access[i]));
    sub->access.push_back(access[i]);
  }
  size_t module_i = 0;
  for (size_t i = 0; i < part_count; ++i) {
    const rig_part &p = parts[i];
    Part q;
    q.kind = p.kind;
    switch (p.kind) {
      case RIG_PART_COPY:
        if (rig_status s = check_slot(p.src_slot, slot_count, i, "source"); s != RIG_OK) return s;
        if (rig_status s = check_slot(p.dst_slot, slot_count, i, "destination"); s != RIG_OK) return s;
        if (!reads(access[p.src_slot]))
          return fail(RIG_INVALID_ARGUMENT, "submission: part %zu copies from slot %u, which is not read", i, p.src_slot);
        if (!writes(access[p.dst_slot]))
          return fail(RIG_INVALID_ARGUMENT, "submission: part %zu copies into slot %u, which is not written", i, p.dst_slot);
        if (p.length != RIG_WHOLE && (p.src_offset + p.length < p.src_offset || p.dst_offset + p.length < p.dst_offset))
          return fail(RIG_INVALID_ARGUMENT, "submission: part %zu: offset + length overflows", i);
        // The overlap rule (Run::copy_overlaps), found here already where the bytes are known to be shared.
        if (p.src_slot == p.dst_slot && p.length != RIG_WHOLE && p.length != 0 &&
            p.src_offset < p.dst_offset + p.length && p.dst_offset < p.src_offset + p.length)
          return fail(RIG_INVALID_ARGUMENT, "submission: part %zu copies within slot %u between overlapping ranges "
                      "(refused on every device: copy through a second buffer)", i, p.src_slot);
        q.src_slot = p.src_slot, q.dst_slot = p.dst_slot, q.src_offset = p.src_offset, q.dst_offset = p.dst_offset;
        q.length = p.length;
        break;
      case RIG_PART_FILL:
        if (rig_status s = check_slot(p.dst_slot, slot_count, i, "destination"); s != RIG_OK) return s;
        if (!writes(access[p.dst_slot]))
          return fail(RIG_INVALID_ARGUMENT, "submission: part %zu fills slot %u, which is not written", i, p.dst_slot);
        if (p.length != RIG_WHOLE && p.dst_offset + p.length < p.dst_offset)
          return fail(RIG_INVALID_ARGUMENT, "submission: part %zu: offset + length overflows", i);
        q.dst_slot = p.dst_slot, q.dst_offset = p.dst_offset, q.length = p.length, q.byte = p.byte;
        break;
      case RIG_PART_HOST_KERNEL:
        if (!p.fn) return fail(RIG_INVALID_ARGUMENT, "submission: part %zu is a host kernel with no function", i);
        q.fn = p.fn, q.user = p.user;
        break;
      case RIG_PART_LAUNCH: {
        if (module_i >= sub->modules.size() || !p.function)
          return fail(RIG_INVALID_ARGUMENT, "submission: part %zu is a launch with no module or function", i);
        Module &m = *sub->modules[module_i++];
        if (m.device != &device)
          return fail(RIG_INVALID_ARGUMENT, "submission: part %zu launches a module loaded on %s, not %s", i,
                      m.device->info().name.c_str(), device.info().name.c_str());
        if (p.slot_count && !p.slots) return fail(RIG_INVALID_ARGUMENT, "submission: part %zu: null slots", i);
        for (uint32_t k = 0; k < p.slot_count; ++k)
          if (rig_status s = check_slot(p.slots[k], slot_count, i, "argument"); s != RIG_OK) return s;
        for (int k = 0; k < 3; ++k)
          if (!p.grid[k] || !p.block[k])
            return fail(RIG_INVALID_ARGUMENT, "submission: part %zu: a grid or block size is 0", i);
        q.module = m.driver_module.get();
        if (rig_status s = q.module->find(p.function, &q.function); s != RIG_OK) return s;
        std::memcpy(q.grid, p.grid, sizeof q.grid);
        std::memcpy(q.block, p.block, sizeof q.block);
        q.shared_bytes = p.shared_bytes;
        q.slots.assign(p.slots, p.slots + p.slot_count);
        break;
      }
      default:
        return fail(RIG_INVALID_ARGUMENT, "submission: part %zu has unknown kind %d", i, static_cast<int>(p.kind));
    }
    if (rig_status s = device.driver().check_part(q); s != RIG_OK) return s;
    sub->parts.push_back(std::move(q));
  }
  *out = std::move(sub);
  return RIG_OK;
}

Run::Run(std::shared_ptr<Submission> submission)
    : device_(submission->device),
      stamping_(submission->access.size(), Stamping{nullptr, nullptr, RIG_ACCESS_READ}),
      submission_(std::move(submission)),
      buffers_(submission_->access.size()),
      bindings_(submission_->access.size()),
      parts_(submission_->parts) {
  resolve();
}

rig_status Run::check_buffer(uint32_t slot, const Buffer &buffer) const {
  const Submission &s = *submission_;
  if (slot >= buffers_.size())
    return fail(RIG_INVALID_ARGUMENT, "run: slot %u of a submission with %zu slots", slot, buffers_.size());
  if (buffer.device != s.device)
    return fail(RIG_INVALID_ARGUMENT,
                "run: slot %u: the buffer is on %s, not %s (borrow it onto %s to use another device's memory)", slot,
                buffer.device->info().name.c_str(), s.device->info().name.c_str(), s.device->info().name.c_str());
  if (writes(s.access[slot]) && buffer.allocation->read_only())
    return fail(RIG_INVALID_ARGUMENT, "run: slot %u is written but the buffer wraps read-only memory", slot);
  return RIG_OK;
}

void Run::bind(uint32_t slot, std::shared_ptr<Buffer> buffer) {
  const Submission &s = *submission_;
  bindings_[slot] = buffer->binding(s.access[slot]);
  stamping_[slot] = {&buffer->allocation->stamps(), buffer->use, s.access[slot]};
  buffers_[slot] = std::move(buffer);
}

rig_status Run::set_buffer(uint32_t slot, std::shared_ptr<Buffer> buffer) {
  if (rig_status s = check_buffer(slot, *buffer); s != RIG_OK) return s;
  recorded_.reset();  // before the binding it was made from changes (resolve makes the next one)
  bind(slot, std::move(buffer));
  resolve();
  return RIG_OK;
}

rig_status Run::rebind(std::span<const std::shared_ptr<Buffer>> buffers) {
  if (buffers.size() != buffers_.size())
    return fail(RIG_INVALID_ARGUMENT, "run: %zu buffers for a submission with %zu slots", buffers.size(), buffers_.size());
  for (uint32_t slot = 0; slot < buffers.size(); ++slot)
    if (rig_status s = check_buffer(slot, *buffers[slot]); s != RIG_OK) return s;
  recorded_.reset();
  for (uint32_t slot = 0; slot < buffers.size(); ++slot) bind(slot, buffers[slot]);
  resolve(false);
  return RIG_OK;
}

rig_status Run::set_scalars(const void *bytes, size_t length) {
  if (length > kMaxScalars) return fail(RIG_INVALID_ARGUMENT, "run: %zu scalar bytes (at most %zu)", length, kMaxScalars);
  if (length && !bytes) return fail(RIG_INVALID_ARGUMENT, "run: null scalars");
  auto *b = static_cast<const std::byte *>(bytes);
  recorded_.reset();  // before the bytes it may point into move
  scalars_.assign(b, b + length);
  record();
  return RIG_OK;
}

void Run::record() {
  if (ready_ && !inline_copy_.dst) recorded_ = device_->driver().record(work());
}

void Run::resolve(bool recorded) {
  recorded_.reset();  // first: it may point into what changes
  not_ready_.clear();
  ready_ = false;
  inline_copy_ = {};
  for (size_t i = 0; i < buffers_.size(); ++i)
    if (!buffers_[i]) {
      not_ready_ = "submit: slot " + std::to_string(i) + " has no buffer";
      return;
    }
  const auto &src = submission_->parts;
  for (size_t i = 0; i < src.size(); ++i) {
    const Part &p = src[i];
    Part &q = parts_[i];
    auto range = [&](uint32_t slot, size_t offset, size_t length) {
      size_t size = buffers_[slot]->length;
      if (in_range(size, offset, length)) return true;
      not_ready_ = "submit: part " + std::to_string(i) + ": [" + std::to_string(offset) + ", +" +
                   std::to_string(length) + ") leaves slot " + std::to_string(slot) + "'s buffer of " +
                   std::to_string(size) + " bytes";
      return false;
    };
    if (p.kind == RIG_PART_COPY) {
      size_t n = p.length;
      if (n == RIG_WHOLE) n = buffers_[p.src_slot]->length >= p.src_offset ? buffers_[p.src_slot]->length - p.src_offset : 0;
      q.length = n;
      if (!range(p.src_slot, p.src_offset, n) || !range(p.dst_slot, p.dst_offset, n)) return;
      if (copy_overlaps(p, n)) {
        not_ready_ = "submit: part " + std::to_string(i) + ": the copy's source and destination overlap in one "
                     "allocation (refused on every device: copy through a second buffer)";
        return;
      }
    } else if (p.kind == RIG_PART_FILL) {
      size_t n = p.length;
      if (n == RIG_WHOLE) n = buffers_[p.dst_slot]->length >= p.dst_offset ? buffers_[p.dst_slot]->length - p.dst_offset : 0;
      q.length = n;
      if (!range(p.dst_slot, p.dst_offset, n)) return;
    }
  }
  if (submission_->device->driver().check_work(work()) != RIG_OK) {
    not_ready_ = last_error();
    return;
  }
  // Ready. One copy on a device that runs work inline: the engine can run it itself (core/submit.cpp).
  ready_ = true;
  if (device_->runs_inline() && parts_.size() == 1 && parts_[0].kind == RIG_PART_COPY) {
    const Part &p = parts_[0];
    void *src = bindings_[p.src_slot].host(), *dst = bindings_[p.dst_slot].host();
    if (src && dst) {
      inline_copy_.dst = static_cast<char *>(dst) + p.dst_offset;
      inline_copy_.src = static_cast<const char *>(src) + p.src_offset;
      inline_copy_.length = p.length;
      if (stamping_.size() <= InlineCopy::kNear) {
        inline_copy_.near = true;
        size_t reads = 0, writes = 0;
        for (size_t i = 0; i < stamping_.size(); ++i) {
          const Stamping &slot = stamping_[i];
          if (slot.access & RIG_ACCESS_READ) inline_copy_.read[reads++] = slot.stamps;
          if (slot.access & RIG_ACCESS_WRITE) inline_copy_.written[writes++] = slot.stamps;
          inline_copy_.use[i] = slot.use;
        }
      }
    }
  }
  if (recorded) record();
}

// One rule on every device: a copy whose source and destination share bytes of one allocation is refused.
// Drivers differ there (memmove on the host, undefined for cuMemcpyAsync and vkCmdCopyBuffer), and making
// every driver memmove would cost a staging copy; refusing is honest and costs the submit path nothing,
// since it is found here, when buffers are bound.
bool Run::copy_overlaps(const Part &p, size_t length) const {
  const Buffer &src = *buffers_[p.src_slot], &dst = *buffers_[p.dst_slot];
  if (length == 0 || src.allocation != dst.allocation) return false;
  size_t s = src.offset + p.src_offset, d = dst.offset + p.dst_offset;  // in range: no overflow
  return s < d + length && d < s + length;
}

rig_status Run::not_ready() const { return fail(RIG_INVALID_ARGUMENT, "%s", not_ready_.c_str()); }

}  // namespace rig
