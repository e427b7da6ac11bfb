#include "load/pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "core/buffer.h"
#include "core/device.h"
#include "core/error.h"
#include "load/mapping.h"
#include "mapped/host_map.h"

namespace rig::load {
namespace {

// A pool made behind comes in pieces of a quarter of it, at most 16 MiB (four of the default chunks): a
// load's first reads wait for one piece's registration, not the whole pool's (RIG_LOAD_TRACE;
// bench/README.md, bench/load: the staging in pieces), and each piece is one registration.
size_t piece_chunks(size_t chunk_bytes, size_t count) {
  return std::clamp<size_t>(count / 4, 1, std::max<size_t>(1, (size_t(16) << 20) / chunk_bytes));
}

}  // namespace

// Why registered ordinary memory: a driver makes pinned memory (cuMemHostAlloc) far below the link's rate,
// so a first load paid a good part of its time for its pool; registering an anonymous mapping
// (cuMemHostRegister) pins it several times faster (bench/README.md, bench/load). Each piece is
// borrowed once as a whole (one driver registration, a counted entry of the range table); each chunk is
// then wrapped and borrowed on its own, inside that entry (no driver call), so that each chunk is an
// allocation whose stamps carry only its own copies and a reader waits for its chunk alone (rule 6).
// A piece's mapping goes with its last wrap's release (load/mapping.h), after every copy that reads it.
Mapping *StagingPool::map_piece(size_t n) {
  size_t length = chunk_bytes_ * n;
  void *base = mapped::map_for_registering(length);
  if (!base) return nullptr;
  try {
    auto *region = new Mapping();
    region->base = base;
    region->length = length;
    return region;
  } catch (...) {
    munmap(base, length);
    return nullptr;
  }
}

rig_status StagingPool::make_piece(size_t first, size_t n, Mapping *region) {
  size_t length = chunk_bytes_ * n;
  if (!region) return fail(RIG_OUT_OF_MEMORY, "staging: mmap of %zu bytes failed", length);
  // pieces_ has room for every piece (make): the region is the pool's from here, and its destructor's.
  void *base = region->base;
  Piece piece{region, nullptr};
  // wrap: one reference for the piece's own wrap, one per chunk's; the region's first stays with the pool.
  // Each wrap goes with its borrow's allocation, and its reference with it (after the copies, rule 6).
  auto wrap = [&](void *at, size_t bytes, std::shared_ptr<Buffer> *out) {
    region->refs.fetch_add(1, std::memory_order_relaxed);
    rig_status s = buffer_wrap(*host_, at, bytes, RIG_ACCESS_READ_WRITE, drop_mapping, region, out);
    if (s != RIG_OK) region->drop();
    return s;
  };
  pieces_.push_back(piece);  // released by the destructor, made whole or not
  Piece &made = pieces_.back();
  {
    std::shared_ptr<Buffer> whole;  // the borrow keeps its allocation (and so the registration)
    rig_status s = wrap(base, length, &whole);
    if (s == RIG_OK) s = buffer_borrow(*device_, *whole, &made.borrow);
    if (s != RIG_OK) return s;
  }
  for (size_t i = first; i < first + n; ++i) {
    std::shared_ptr<Buffer> chunk;
    rig_status s = wrap(static_cast<char *>(base) + (i - first) * chunk_bytes_, chunk_bytes_, &chunk);
    if (s == RIG_OK) s = buffer_borrow(*device_, *chunk, &slots_[i]);
    if (s != RIG_OK) return s;
  }
  return RIG_OK;
}

void StagingPool::hand_out(size_t first, size_t n) {
  {
    std::lock_guard lock(mutex_);
    for (size_t i = first; i < first + n; ++i) free_.push_back(i);
  }
  made_.fetch_add(n, std::memory_order_release);
  cv_.notify_all();
}

// The next piece's memory is touched on a thread of its own while the piece before it registers: the
// kernel zeroing pages and the driver pinning them overlap, so pieces land at the pace of the slower of the
// two instead of their sum (bench/README.md, bench/load: the staging touched in step with its registration).
void StagingPool::touch_ahead(size_t n) noexcept {
  try {
    toucher_ = std::thread([this, n] { ahead_ = map_piece(n); });
  } catch (...) {  // no thread: take_ahead answers null and the piece is mapped in its turn
  }
}

Mapping *StagingPool::take_ahead() noexcept {
  if (toucher_.joinable()) toucher_.join();
  return std::exchange(ahead_, nullptr);
}

// A piece refused behind (the driver out of pinnable memory) ends the growth: the load goes on through
// the chunks it has, more slowly, which is better than failing a load that can finish. Its chunks made
// before the refusal stay unhanded and go with the pool.
void StagingPool::make_behind(size_t from, size_t count) noexcept {
  size_t piece = piece_chunks(chunk_bytes_, count);
  // The first piece behind is always tried, even for a pool already stopping: a short load then costs its
  // release one piece's registration, and a refusal behind the first piece is met in every load that grows.
  try {
    for (size_t first = from; first < count; first += piece) {
      if (first > from && stop_growing_.load(std::memory_order_acquire)) break;
      size_t n = std::min(piece, count - first);
      Mapping *region = take_ahead();  // touched while the piece before registered (make's for the first)
      if (!region) region = map_piece(n);
      if (region && first + n < count) touch_ahead(std::min(piece, count - first - n));
      if (make_piece(first, n, region) != RIG_OK) break;
      hand_out(first, n);
    }
  } catch (...) {  // out of host memory (the region, the free list): as a refusal
  }
  if (Mapping *unused = take_ahead()) unused->drop();  // touched, never registered: unmapped here
}

rig_status StagingPool::make(Device &device, Device &host, size_t chunk_bytes, size_t count,
                             std::unique_ptr<StagingPool> *out) {
  auto empty = [&] {  // no chunk made yet, every slot's place set
    auto p = std::make_unique<StagingPool>();
    p->device_ = &device;
    p->host_ = &host;
    p->chunk_bytes_ = chunk_bytes;
    p->slots_.assign(count, nullptr);
    p->last_value_.reset(new std::atomic<uint64_t>[count]());
    p->pieces_.reserve(count);
    return p;
  };
  auto p = empty();
  StagingPool *self = p.get();
  size_t piece = piece_chunks(chunk_bytes, count);
  size_t now = std::min(count, piece);
  Mapping *first = count ? p->map_piece(now) : nullptr;
  // The second piece's memory is touched while the first registers; the grower takes it.
  if (first && now < count) p->touch_ahead(std::min(piece, count - now));
  rig_status s = count ? p->make_piece(0, now, first) : RIG_OK;
  if (s == RIG_OK) {
    p->hand_out(0, now);
    if (now < count) p->grower_ = std::thread([self, now, count] { self->make_behind(now, count); });
    *out = std::move(p);
    return RIG_OK;
  }
  if (s != RIG_UNSUPPORTED && s != RIG_UNMAPPABLE)
    return fail(s, "staging of %zu chunks of %zu bytes: %s", count, chunk_bytes, last_error());
  // A device that borrows no host memory (Vulkan without its opt-in): its own pinned buffers.
  p = empty();
  for (size_t i = 0; i < count; ++i) {
    rig_status s = buffer_create(device, chunk_bytes, RIG_MEMORY_PINNED, &p->slots_[i]);
    if (s != RIG_OK) return fail(s, "staging chunk %zu of %zu bytes: %s", i, chunk_bytes, last_error());
  }
  p->hand_out(0, count);
  *out = std::move(p);
  return RIG_OK;
}

StagingPool::~StagingPool() {
  stop_growing_.store(true, std::memory_order_release);
  if (grower_.joinable()) grower_.join();
  if (Mapping *unused = take_ahead()) unused->drop();  // no grower took it: the first piece refused, or no thread
  // None of these waits: each allocation's memory returns, and a piece is unmapped after its last, once
  // the copies that read it are reached.
  slots_.clear();
  for (Piece &piece : pieces_) {
    piece.borrow.reset();
    piece.region->drop();
  }
}

bool StagingPool::acquire(const std::atomic<bool> &halt, size_t *slot) {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return !free_.empty() || halt.load(std::memory_order_acquire); });
  if (halt.load(std::memory_order_acquire)) return false;
  *slot = free_.front();
  free_.pop_front();
  return true;
}

void StagingPool::wake() {
  { std::lock_guard lock(mutex_); }  // a waiter is either before its predicate or asleep: never between
  cv_.notify_all();
}

void StagingPool::give_back(size_t slot, uint64_t value) {
  last_value_[slot].store(value, std::memory_order_release);
  {
    std::lock_guard lock(mutex_);
    free_.push_back(slot);
  }
  cv_.notify_one();
}

rig_status stage(const std::vector<Device *> &devices, Device &host, const std::vector<StagingPool *> &given,
                 const std::vector<size_t> &chunks_of, size_t chunk_bytes, uint64_t budget,
                 std::vector<StagingPool *> *pools, std::vector<std::unique_ptr<StagingPool>> *own) {
  size_t readers = 0;  // devices that read through a pool made here: they share the budget
  for (size_t d = 0; d < devices.size(); ++d) readers += chunks_of[d] && !given[d];
  for (size_t d = 0; d < devices.size(); ++d) {
    if (given[d]) {
      if (given[d]->chunk_bytes() < chunk_bytes) return fail(RIG_INVALID_ARGUMENT, "a pool's chunks are under 64 KiB plus alignment");
      if (!given[d]->claim()) return fail(RIG_BUSY, "pool of placement device %zu is used by another load", d);
      pools->push_back(given[d]);
      continue;
    }
    if (!chunks_of[d]) {
      pools->push_back(nullptr);
      continue;
    }
    size_t slots = std::clamp<size_t>(budget / readers / chunk_bytes, 1, chunks_of[d]);
    std::unique_ptr<StagingPool> pool;
    if (rig_status s = StagingPool::make(*devices[d], host, chunk_bytes, slots, &pool)) return s;
    pool->claim();
    pools->push_back(pool.get());
    own->push_back(std::move(pool));
  }
  return RIG_OK;
}

bool StagingPool::claim() {
  std::lock_guard lock(mutex_);
  if (claimed_) return false;
  claimed_ = true;
  return true;
}
void StagingPool::unclaim() {
  std::lock_guard lock(mutex_);
  claimed_ = false;
}
bool StagingPool::claimed() {
  std::lock_guard lock(mutex_);
  return claimed_;
}

}  // namespace rig::load
