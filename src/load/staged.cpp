// The staged path's two roles: readers claim chunks in file order, each with a staging chunk of its
// device's pool, and fill them from the file; one copier (the run thread) submits the filled chunks'
// copies in file order, and each staging chunk goes back to its pool once its copies are submitted.
#include <algorithm>
#include <optional>

#include "core/buffer.h"
#include "core/deadline.h"
#include "core/device.h"
#include "core/error.h"
#include "load/direct_read.h"
#include "load/load.h"

namespace rig::load {

// A read error or a file that ends early is the file's: the words name it. A gathered chunk's runs are read
// through the page cache one by one (a run is not aligned for O_DIRECT), packed in order.
rig_status Load::read_chunk(const Chunk &c, void *dst, DirectRead *reader) {
  uint64_t want = c.end - c.start;
  if (!c.gather.empty()) {
    for (const Segment &g : c.gather)
      if (rig_status s = file_->read(g.at, static_cast<unsigned char *>(dst) + g.chunk_offset, g.length)) return s;
    bytes_read_ += c.packed;
    return RIG_OK;
  }
  if (direct_fds_.empty()) {
    if (rig_status s = file_->read(c.start, dst, want)) return s;  // its words name the shard
    bytes_read_ += want;
    return RIG_OK;
  }
  const Shard &shard = *file_->shards[c.shard];
  size_t got = 0;
  if (rig_status s = reader->read(c.start - shard.base, dst, round_up(want, direct_align), &got))
    return fail(s, "%s: %s", shard.path.c_str(), last_error());
  if (got < want)
    return fail(RIG_INVALID_ARGUMENT, "the file %s ended at %llu, inside a tensor (it shrank?)", shard.path.c_str(),
                (unsigned long long)(c.start - shard.base + got));
  bytes_read_ += got;
  return RIG_OK;
}

void Load::read_worker() {
  rig_status s = RIG_OK;
  // This thread's rings for O_DIRECT reads, one per shard, made as its chunks come: the chunks run in
  // stream order, so a thread holds the ring of the shard it reads and the one before.
  std::vector<std::optional<DirectRead>> readers(direct_fds_.size());
  while (!stopping(&s)) {
    size_t i, slot;
    {
      Timed timed(phase_ns_[STAGING_WAIT]);
      std::lock_guard claim(claim_mutex_);
      if (next_chunk_ >= chunks_.size()) break;
      i = next_chunk_;
      // Waiting for a free staging chunk holding the claim is the point: chunks get theirs in file order.
      if (!pools_[chunks_[i].device]->acquire(halted_, &slot)) break;
      ++next_chunk_;
    }
    const Chunk &c = chunks_[i];
    StagingPool &pool = *pools_[c.device];
    void *host = nullptr;
    {
      Timed timed(phase_ns_[STAGING_WAIT]);
      // The chunk's last copies are usually close to done: spin on the device's timeline a while (a pure
      // read) rather than let the export's wait sleep, whose slices the kernel rounds up by its timer slack
      // and more; a reader has a core of its own (3/4 of them).
      const Device &device = *devices_[c.device];
      uint64_t want = pool.last_value(slot);
      for (uint64_t until = steady_ns() + 2000000; want && device.signaled() < want && steady_ns() < until;)
        for (int k = 0; k < 32; ++k) cpu_relax();
      // Waits for every use of this staging chunk: the copies that read it last time (rule 6).
      s = buffer_export(pool.buffer(slot), &host);
    }
    if (s) s = fail(s, "staging chunk: %s", last_error());
    if (!s) {
      Timed timed(phase_ns_[READ]);
      DirectRead *reader = nullptr;
      if (!readers.empty()) {
        if (!readers[c.shard]) readers[c.shard].emplace(direct_fds_[c.shard]);
        reader = &*readers[c.shard];
        for (uint32_t k = 0; k + 1 < c.shard; ++k) readers[k].reset();  // shards behind: no chunk of theirs is left
      }
      s = read_chunk(c, host, reader);
    }
    if (!s) s = file_->unchanged();
    if (s) {
      pool.give_back(slot);
      fail_with(s);
      break;
    }
    filled_host_[i] = host;
    trace_.mark(Trace::FIRST_READ);
    {
      std::lock_guard lock(fill_mutex_);
      filled_[i].store(uint32_t(slot + 1), std::memory_order_release);
    }
    fill_cv_.notify_one();
  }
}

// Why one copier: with every reader submitting its own chunk's copies, the readers took turns on one
// device's turn and one driver stream, and spent a good part of their time waiting there instead of reading
// (bench/README.md, bench/load). One thread submits in file order (the first tensors land first) and the
// readers only read. A chunk's copies go as one batch (load/copier.h: one turn and one mark for its
// pieces). Why not several chunks a batch: a batch's copies are seen done only once its last is, and a
// reader reuses a chunk only once its copies are done, so chunks held for a batch came back later; on an
// H200 batches of up to a quarter of the pool ran later loads 0.92-0.93 of the link where a batch a chunk
// ran 0.94 (bench/README.md, bench/load: the copies in batches).
void Load::copy_worker() {
  rig_status s = RIG_OK;
  size_t ahead = 0;  // chunks before this one have their tensors made
  std::vector<LoadTensor *> done;
  for (size_t i = 0; i < chunks_.size() && !stopping(&s); ++i) {
    uint32_t v = filled_[i].load(std::memory_order_acquire);
    // A chunk takes a while to read: spin that long before sleeping, making the tensors of the chunks ahead
    // meanwhile. Why here: an allocation is slow and holds the driver's lock, so the readers making them
    // slowed the copier's submits, and the copier making them only in line left the link idle behind a
    // shallow queue (bench/README.md, bench/load).
    ahead = std::max(ahead, i);
    for (auto until = steady_ns() + 100000; !v && !halted_.load(std::memory_order_relaxed) && steady_ns() < until;) {
      if (ahead < chunks_.size() && ahead < i + 64) {
        for (const Piece &p : chunks_[ahead].pieces)
          if (!s) s = make_buffer(*tensors_[p.tensor], tensors_[p.tensor]->devices[0]);
        ++ahead;
      } else {
        for (int k = 0; k < 32; ++k) cpu_relax();
      }
      v = filled_[i].load(std::memory_order_acquire);
    }
    if (s) break;
    if (!v) {
      std::unique_lock lock(fill_mutex_);
      fill_cv_.wait(lock, [&] {
        v = filled_[i].load(std::memory_order_acquire);
        return v != 0 || halted_.load(std::memory_order_acquire);
      });
    }
    if (!v) break;  // halted
    filled_[i].store(0, std::memory_order_relaxed);
    const Chunk &c = chunks_[i];
    StagingPool &pool = *pools_[c.device];
    s = copy_chunk(c, pool.buffer(v - 1), static_cast<const unsigned char *>(filled_host_[i]), &done);
    if (!s) s = settle(&done);
    uint64_t submitted = 0;  // at or past the chunk's copies: the next reader of this chunk spins up to it
    if (!s) submitted = devices_[c.device]->submitted();
    pool.give_back(v - 1, submitted);
    if (s) break;
    progress(c.bytes());
  }
  if (s) fail_with(s);
}

// Chunks filled but never submitted (the load stopped): their staging goes back to the pool, which may be
// the caller's and outlive this load.
void Load::give_back_unsubmitted() {
  for (size_t i = 0; i < chunks_.size(); ++i)
    if (uint32_t v = filled_[i].exchange(0)) pools_[chunks_[i].device]->give_back(v - 1);
}

}  // namespace rig::load
