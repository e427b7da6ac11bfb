#include "load/copier.h"

#include <span>

#include "core/buffer.h"
#include "core/error.h"
#include "core/submission.h"
#include "core/submit.h"

namespace rig::load {
namespace {

// Points `view` at [offset, offset + length) of `buffer` (a view's fields, as core's buffer_view makes them).
void view_into(Buffer &view, const Buffer &buffer, uint64_t offset, uint64_t length) {
  view = buffer;
  view.offset = buffer.offset + offset;
  view.length = length;
}

}  // namespace

rig_status Copier::make(Device &device, std::unique_ptr<Copier> *out) {
  rig_part part{};
  part.size = sizeof part;
  part.kind = RIG_PART_COPY;
  part.src_slot = 0;
  part.dst_slot = 1;
  part.length = RIG_WHOLE;
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  std::shared_ptr<Submission> submission;
  if (rig_status s = submission_make(device, &part, 1, access, 2, {}, &submission)) return s;
  std::unique_ptr<Copier> c(new Copier());
  for (size_t i = 0; i < kBatch; ++i) {
    c->runs_[i] = std::make_unique<Run>(submission);
    c->batch_[i] = c->runs_[i].get();
    for (auto &v : c->views_[i]) v = std::make_shared<Buffer>();
  }
  *out = std::move(c);
  return RIG_OK;
}

Copier::~Copier() = default;

rig_status Copier::add(const Buffer &src, uint64_t src_offset, const Buffer &dst, uint64_t dst_offset,
                       uint64_t length) {
  if (!in_range(src.length, src_offset, length) || !in_range(dst.length, dst_offset, length))
    return fail(RIG_INVALID_ARGUMENT, "copy: [%llu, +%llu) or [%llu, +%llu) leaves its buffer",
                (unsigned long long)src_offset, (unsigned long long)length, (unsigned long long)dst_offset,
                (unsigned long long)length);
  auto &views = views_[count_];
  view_into(*views[0], src, src_offset, length);
  view_into(*views[1], dst, dst_offset, length);
  if (rig_status s = runs_[count_]->rebind(views)) {
    for (auto &v : views) v->allocation.reset();
    return s;
  }
  return ++count_ == kBatch ? flush() : RIG_OK;
}

rig_status Copier::flush() {
  if (count_ == 0) return RIG_OK;
  size_t n = count_;
  count_ = 0;
  rig_status s = n == 1 ? submit(*runs_[0], nullptr, 0, nullptr)
                        : submit_many(std::span<Run *const>(batch_.data(), n), nullptr, 0, nullptr);
  // The runs keep the views (rebound before their next submit, never submitted as they are now); the views
  // let go of the allocations here, so that the buffers' holders alone decide when each goes.
  for (size_t i = 0; i < n; ++i)
    for (auto &v : views_[i]) v->allocation.reset();
  return s;
}

rig_status Copier::copy(const Buffer &src, uint64_t src_offset, const Buffer &dst, uint64_t dst_offset,
                        uint64_t length) {
  rig_status s = add(src, src_offset, dst, dst_offset, length);
  return s ? s : flush();
}

}  // namespace rig::load
