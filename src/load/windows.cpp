// The registered and direct paths: the file read in windows that the devices read themselves, either
// views of the file's kept registration or windows of one mapping of the file, each wrapped and borrowed
// (registered, or mapped for a device that reads host memory directly) for its copies.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/buffer.h"
#include "core/error.h"
#include "load/load.h"
#include "load/mapping.h"

namespace rig::load {

// Windows of the file's kept registration: views, so nothing is registered, mapped or released per window.
void Load::run_kept() {
  rig_status s = RIG_OK;
  std::vector<LoadTensor *> done;
  uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  for (const Chunk &c : chunks_) {
    if (stopping(&s)) break;
    const Shard &shard = *file_->shards[c.shard];
    uint64_t length = std::min(round_up(c.end, page), shard.base + round_up(shard.size, page)) - c.start;
    std::shared_ptr<Buffer> view;  // not the last reference: the registration stays
    s = buffer_view(*file_->kept_on(*devices_[c.device], c.shard), c.start - shard.base, length, &view);
    if (s) s = fail(s, "a window of the kept registration: %s", last_error());
    if (!s) s = copy_chunk(c, *view, nullptr, &done);
    if (!s) s = settle(&done);  // a window's many tensors go kBatch copies a submit (load/copier.h)
    if (!s) s = file_->unchanged();
    if (s) break;
    bytes_read_ += length;
    progress(c.end - c.start);
  }
  if (s) fail_with(s);
  // Each view went after its copies: a page of a kept mapping found missing means bytes copied that are
  // not the file's (load/guarded_mapping.h).
  for (Device *d : devices_)
    if (rig_status f = file_->kept_intact(*d)) {
      fail_with(f);
      break;
    }
}

namespace {

// A read-only MAP_SHARED mapping of a whole shard, shared by the windows wrapped over it (load/mapping.h),
// guarded: a page the file loses while a device reads it reads zeros, not SIGBUS (load/guarded_mapping.h).
rig_status map_shard(const Shard &shard, Mapping **out) {
  auto *m = new Mapping();
  m->length = shard.size;
  m->guarded = shard.size != 0;
  m->base = shard.size ? map_guarded(shard.fd, shard.size) : nullptr;
  if (m->base == MAP_FAILED) {
    delete m;
    return fail(RIG_DRIVER, "mmap %s: %s", shard.path.c_str(), strerror(errno));
  }
  *out = m;
  return RIG_OK;
}

// Drops the maker's reference to a shard's mapping once every copy that read it is reached (its windows
// went, each after its copies): a page found missing means bytes copied that are not the file's, whether
// the file shrank or the disk failed a read. Sets rig's message where it fails.
rig_status release_shard(Mapping *m, const Shard &shard) {
  uint64_t missing;
  rig_status s = RIG_OK;
  if (m->base && guarded_fault(m->base, &missing))
    s = fail(RIG_INVALID_ARGUMENT, "the file %s could not be read through its mapping at offset %llu (it shrank "
             "during the load, or the read failed): the load's bytes from there are not the file's",
             shard.path.c_str(), (unsigned long long)missing);
  m->drop();
  return s;
}

}  // namespace

void Load::run_windows() {
  if (route_.kept) return run_kept();
  // Each shard mapped when its first window comes, and its maker's reference dropped once the windows move
  // past it and its last window's copies are reached (its fault checked then): the mapping goes with its
  // last window.
  Mapping *m = nullptr, *passed = nullptr;  // the shard's being read, the one before until its check
  uint32_t mapped = 0, passed_shard = 0;
  rig_status s = RIG_OK;
  uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  // Dropping a window's last reference waits for the copies that read it (rule 6), so the window before
  // goes only after the next one is registered and its copies submitted: released behind, by one.
  std::shared_ptr<Buffer> behind;
  std::vector<LoadTensor *> done;
  for (const Chunk &c : chunks_) {
    if (stopping(&s)) break;
    const Shard &shard = *file_->shards[c.shard];
    if (!m || mapped != c.shard) {
      passed = m;
      passed_shard = mapped;
      m = nullptr;
      if ((s = map_shard(shard, &m))) break;
      mapped = c.shard;
    }
    uint64_t length = std::min(round_up(c.end, page), shard.base + round_up(shard.size, page)) - c.start;
    std::shared_ptr<Buffer> window, borrowed;
    m->refs.fetch_add(1, std::memory_order_relaxed);
    s = buffer_wrap(*host_, static_cast<char *>(m->base) + (c.start - shard.base), length, RIG_ACCESS_READ,
                    drop_mapping, m, &window);
    if (s) {
      m->drop();  // a failed wrap calls no release callback
      s = fail(s, "wrapping a window of the mapping: %s", last_error());
      break;
    }
    // Registers the window with the device's driver (or maps it, for a device that reads it directly);
    // the copies of the window before it are already on the device's queue, so this overlaps them.
    s = buffer_borrow(*devices_[c.device], *window, &borrowed);
    if (s) s = fail(s, "registering a window of %llu bytes: %s", (unsigned long long)length, last_error());
    window.reset();  // the borrow holds the allocation: unregistered and unmapped with it
    if (!s) s = copy_chunk(c, *borrowed, nullptr, &done);
    if (!s) s = settle(&done);
    if (!s) s = file_->unchanged();
    if (s) fail_with(s);  // before a drop below may wait and leave words of its own
    behind = std::move(borrowed);  // the window before goes here, once its copies are reached
    if (passed) {  // the window that went was the shard before's last: its copies are reached
      rig_status f = release_shard(passed, *file_->shards[passed_shard]);
      passed = nullptr;
      if (f) fail_with(f);
      if (!s) s = f;
    }
    if (s) break;
    bytes_read_ += length;
    progress(c.end - c.start);
  }
  if (s) fail_with(s);  // before the last window's drop, which waits for its copies
  behind.reset();
  for (auto [done, index] : {std::pair{passed, passed_shard}, std::pair{m, mapped}})
    if (done) {
      rig_status f = release_shard(done, *file_->shards[index]);
      if (f) fail_with(f);
    }
}

}  // namespace rig::load
