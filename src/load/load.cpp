// A load's run: decide the path, read the file once, copy every byte with rig submits, hand each tensor
// out as soon as its copies are submitted. Ordering is the stamps' job: each tensor has its own
// allocation per device (a part of an arena, load/arenas.h: stamps of its own), so work reading tensor k
// follows the copies into k and nothing else (rule 3);
// a staging chunk is reused only after rig_buffer_export waited for the copy that read it (rule 6).
#include "load/load.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "capi/internal.h"
#include "core/driver_memory.h"
#include "core/error.h"
#include "core/deadline.h"
#include "load/direct_read.h"
#include "load/mapping.h"
#include "load/path.h"

namespace rig::load {
namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;
constexpr uint64_t direct_align = 4096;

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

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

// The fraction of [offset, offset+length) of the file resident in the page cache, from mincore over up to
// 128 samples of 8 pages spread evenly over the range. Why sampled: mincore of every page of a 4 GiB file
// took 70-135 ms (2-core VM, 2026-12-01), most of a warm load's time at the link's rate, to choose between
// two ways of reading where a rough fraction is plenty. Why so few: each mincore is a system call of about
// 1 us whatever its length (1024 samples of 16 pages took 1.8 ms, 128 of 8 pages 0.15 ms, the VM), paid
// inside every load; 128 samples put a fraction of one half within 0.09 (two standard deviations), and a
// file that close to half resident loads about as fast either way.
double resident_fraction(int fd, uint64_t size, uint64_t offset, uint64_t length) {
  if (length == 0 || size == 0) return 1.0;
  void *map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return 1.0;
  constexpr uint64_t samples = 128, run = 8;
  uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t first = offset / page, last = (offset + length + page - 1) / page, pages = last - first;
  uint64_t step = pages <= samples * run ? run : pages / samples;
  unsigned char vec[run];
  size_t in = 0, seen = 0;
  for (uint64_t p = first; p < last; p += step) {
    uint64_t n = std::min(run, last - p);
    if (mincore(static_cast<char *>(map) + p * page, n * page, vec) != 0) break;
    for (uint64_t k = 0; k < n; ++k) in += vec[k] & 1;
    seen += n;
  }
  munmap(map, size);
  return seen ? double(in) / double(seen) : 1.0;
}

}  // namespace

Load::Timed::Timed(std::atomic<uint64_t> &to) : to(to), t0(steady_ns()) {}
Load::Timed::~Timed() { to.fetch_add(steady_ns() - t0, std::memory_order_relaxed); }

rig_status Load::start(std::shared_ptr<File> file, const size_t *selected, size_t count,
                       const rig_load_placement &placement, const rig_load_options &options,
                       std::vector<std::shared_ptr<StagingPool>> pools, std::unique_ptr<Load> *out) {
  std::unique_ptr<Load> l(new Load());
  // rig_load_stats' seconds count from here (rig_load.h): the plan, the residency sample and a staging
  // pool made for this load are the load's time too.
  l->t0_ns_ = steady_ns();
  l->trace_.begin(l->t0_ns_);
  l->file_ = file;
  l->options_ = options;
  l->options_.pools = nullptr;  // handles of the C face: resolved into `pools`
  l->given_pools_ = std::move(pools);
  const rig_load_options &o = l->options_;
  if (placement.device_count == 0 || placement.device_count > 64 || !placement.devices)
    return fail(RIG_INVALID_ARGUMENT, "the placement names %zu devices (1..64)", placement.device_count);
  for (size_t i = 0; i < placement.device_count; ++i) {
    rig_device_info info{};
    info.size = sizeof info;
    if (rig_status s = rig_device_get_info(placement.devices[i], &info))
      return fail(s, "placement device %zu: %s", i, rig_last_error());
    for (size_t j = 0; j < i; ++j)
      if (placement.devices[j] == placement.devices[i]) return fail(RIG_INVALID_ARGUMENT, "placement device %zu appears twice", i);
    l->devices_.push_back(placement.devices[i]);
    l->given_.push_back(nullptr);
    for (const auto &pool : l->given_pools_)
      if (pool && pool->device() == placement.devices[i]) l->given_.back() = pool.get();
  }
  if (placement.rule != RIG_LOAD_RULE_EACH && placement.rule != RIG_LOAD_RULE_BY_LAYER && placement.rule != RIG_LOAD_RULE_MASKS)
    return fail(RIG_INVALID_ARGUMENT, "unknown placement rule %d", int(placement.rule));
  if (placement.rule == RIG_LOAD_RULE_MASKS && !placement.masks) return fail(RIG_INVALID_ARGUMENT, "RULE_MASKS without masks");
  if (o.path < RIG_LOAD_PATH_AUTO || o.path > RIG_LOAD_PATH_DIRECT) return fail(RIG_INVALID_ARGUMENT, "unknown path %d", int(o.path));
  if (o.io < RIG_LOAD_IO_AUTO || o.io > RIG_LOAD_IO_DIRECT) return fail(RIG_INVALID_ARGUMENT, "unknown io %d", int(o.io));

  // The selection and its placement.
  const size_t n = selected ? count : file->tensors.size();
  l->by_file_index_.assign(file->tensors.size(), 0);
  long long max_layer = -1;
  for (const auto &t : file->tensors) max_layer = std::max(max_layer, layer_of(t.name));
  for (size_t i = 0; i < n; ++i) {
    size_t index = selected ? selected[i] : i;
    if (index >= file->tensors.size()) return fail(RIG_INVALID_ARGUMENT, "tensor index %zu: the file has %zu", index, file->tensors.size());
    if (l->by_file_index_[index]) return fail(RIG_INVALID_ARGUMENT, "tensor %zu is selected twice", index);
    l->by_file_index_[index] = i + 1;
    auto t = std::make_unique<LoadTensor>();
    const TensorEntry &e = file->tensors[index];
    t->index = index;
    t->offset = e.offset;
    t->length = e.length;
    t->remaining = e.length;
    t->buffers.assign(l->devices_.size(), nullptr);
    switch (placement.rule) {
      case RIG_LOAD_RULE_EACH:
        for (size_t d = 0; d < l->devices_.size(); ++d) t->devices.push_back(d);
        break;
      case RIG_LOAD_RULE_BY_LAYER: {
        long long layer = layer_of(e.name);
        size_t d = layer < 0 ? 0 : size_t(layer * (long long)l->devices_.size() / (max_layer + 1));
        t->devices.push_back(d);
        break;
      }
      default: {
        uint64_t mask = placement.masks[i];
        if (!mask || (l->devices_.size() < 64 && (mask >> l->devices_.size())))
          return fail(RIG_INVALID_ARGUMENT, "mask of selected tensor %zu names no device or one past device_count", i);
        for (size_t d = 0; d < l->devices_.size(); ++d)
          if (mask >> d & 1) t->devices.push_back(d);
      }
    }
    l->bytes_total_ += e.length;
    l->tensors_.push_back(std::move(t));
  }
  if (rig_status s = file->unchanged()) return s;
  // Each device's tensors as parts of a few allocations (load/arenas.h), laid out in file order. Where the
  // caller keeps a staging pool for the device (it loads again: given_), from the device's reuse pool
  // (core/driver_memory.h): a later load's copies then land in memory no free gave back to the driver
  // (0.955 of the link against 0.91 on an H200), while the pool's growth costs the load that makes it about
  // 5% (bench/README.md, 2026-12-01): a load with no kept pool takes plain device memory.
  std::vector<size_t> by_offset(l->tensors_.size());
  for (size_t i = 0; i < by_offset.size(); ++i) by_offset[i] = i;
  std::sort(by_offset.begin(), by_offset.end(),
            [&](size_t a, size_t b) { return l->tensors_[a]->offset < l->tensors_[b]->offset; });
  for (size_t d = 0; d < l->devices_.size(); ++d) {
    std::vector<size_t> order;
    std::vector<uint64_t> lengths;
    for (size_t i : by_offset)
      for (size_t placed : l->tensors_[i]->devices)
        if (placed == d) order.push_back(i), lengths.push_back(l->tensors_[i]->length);
    l->arenas_.push_back(std::make_unique<Arenas>(l->tensors_.size(), order, lengths,
                                                  o.arena_bytes ? o.arena_bytes : RIG_LOAD_DEFAULT_ARENA_BYTES,
                                                  l->given_[d] ? kMemoryDeviceReused : RIG_MEMORY_DEVICE));
  }

  // A registration kept on every device (rig_load_file_keep_registered, which checked the verdict): the
  // copies read it straight, with nothing to register, stage or probe.
  l->kept_ = o.path == RIG_LOAD_PATH_AUTO || o.path == RIG_LOAD_PATH_REGISTERED;
  for (rig_device d : l->devices_) l->kept_ = l->kept_ && file->kept_on(d);
  if (l->kept_) {
    l->path_ = RIG_LOAD_PATH_REGISTERED;
    l->why_ = "the file's registration is kept on every device (rig_load_file_keep_registered): nothing to register";
  }
  // The path, from every device's verdict (the probe only where a registered load is asked for).
  bool all_direct = true, all_registered = true;
  std::string verdicts;
  for (size_t d = 0; d < l->devices_.size() && !l->kept_; ++d) {
    Allowed a;
    if (rig_status s = allowed_on(l->devices_[d], *file, o.path == RIG_LOAD_PATH_REGISTERED, &a)) return s;
    all_direct &= a.direct;
    all_registered &= a.registered;
    verdicts += (d ? "; " : "") + a.verdict;
  }
  if (!l->kept_) switch (o.path) {
    case RIG_LOAD_PATH_AUTO:
      l->path_ = all_direct ? RIG_LOAD_PATH_DIRECT : RIG_LOAD_PATH_STAGED;
      l->why_ = all_direct ? "auto: the verdict is Not_needed (the device reads the mapping itself): " + verdicts
                           : "auto: staged (registering pays only on a reload of a mapping kept registered; "
                             "pinned staging kept in a pool reaches the link on a first load): verdict " + verdicts;
      break;
    case RIG_LOAD_PATH_REGISTERED:
      if (!all_registered)
        return fail(RIG_UNSUPPORTED, "the registered path needs a Usable verdict on every device: %s", verdicts.c_str());
      l->path_ = RIG_LOAD_PATH_REGISTERED;
      l->why_ = "asked for: " + verdicts;
      break;
    case RIG_LOAD_PATH_DIRECT:
      if (!all_direct) return fail(RIG_UNSUPPORTED, "the direct path needs a Not_needed verdict on every device: %s", verdicts.c_str());
      l->path_ = RIG_LOAD_PATH_DIRECT;
      l->why_ = "asked for: " + verdicts;
      break;
    default:
      l->path_ = RIG_LOAD_PATH_STAGED;
      l->why_ = "asked for";
  }

  // Chunks (staged) or windows (registered, direct).
  uint64_t chunk = round_up(o.chunk_bytes ? o.chunk_bytes : RIG_LOAD_DEFAULT_CHUNK_BYTES, 64 * KiB);
  std::vector<PlanTensor> plan;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto &t : l->tensors_) {
    plan.push_back(PlanTensor{t->offset, t->length, t->devices[0]});
    if (t->length) lo = std::min(lo, t->offset), hi = std::max(hi, t->offset + t->length);
  }
  l->trace_.mark(Trace::PLANNED);
  if (l->path_ == RIG_LOAD_PATH_STAGED) {
    bool direct_io = o.io == RIG_LOAD_IO_DIRECT ||
                     (o.io == RIG_LOAD_IO_AUTO && hi > lo && resident_fraction(file->fd, file->size, lo, hi - lo) < 0.5);
    if (direct_io) {
      l->direct_fd_ = ::open(file->path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
      if (l->direct_fd_ >= 0) {
        l->align_ = direct_align;
        l->why_ += o.io == RIG_LOAD_IO_DIRECT ? "; O_DIRECT reads (asked for)" : "; O_DIRECT reads (under half the file is in the page cache)";
        DirectRead ring(l->direct_fd_);  // each reader thread makes its own; this one says whether they can
        l->why_ += ring.uring() ? " through io_uring" : " with pread (" + ring.why_not() + ")";
      } else {
        l->why_ += "; buffered reads (the file system refused O_DIRECT)";
      }
    }
    // Pools given by the caller set the chunk; the load makes one for every other device that reads.
    const std::vector<StagingPool *> &given = l->given_;
    uint64_t slack = l->align_ > 1 ? l->align_ : 0;
    for (auto *p : given)
      if (p) chunk = std::min<uint64_t>(chunk, p->chunk_bytes() > slack + 64 * KiB ? p->chunk_bytes() - slack : 64 * KiB);
    l->chunks_ = make_plan(plan, chunk, l->align_);
    std::vector<size_t> chunks_of(l->devices_.size(), 0);
    for (const auto &c : l->chunks_) chunks_of[c.device]++;
    size_t readers = 0;
    for (size_t d = 0; d < l->devices_.size(); ++d) readers += chunks_of[d] && !given[d];
    uint64_t budget = o.staging_bytes ? o.staging_bytes : RIG_LOAD_DEFAULT_STAGING_BYTES;
    for (size_t d = 0; d < l->devices_.size(); ++d) {
      if (given[d]) {
        if (given[d]->chunk_bytes() < chunk + slack) return fail(RIG_INVALID_ARGUMENT, "a pool's chunks are under 64 KiB plus alignment");
        if (!given[d]->claim()) return fail(RIG_BUSY, "pool of placement device %zu is used by another load", d);
        l->pools_.push_back(given[d]);
        continue;
      }
      if (!chunks_of[d]) { l->pools_.push_back(nullptr); continue; }
      size_t slots = std::clamp<size_t>(budget / readers / (chunk + slack), 1, chunks_of[d]);
      std::unique_ptr<StagingPool> pool;
      if (rig_status s = StagingPool::make(l->devices_[d], chunk + slack, slots, true, &pool)) return s;
      pool->claim();
      l->pools_.push_back(pool.get());
      l->own_pools_.push_back(std::move(pool));
    }
  } else {
    uint64_t window = round_up(o.window_bytes ? o.window_bytes : 256 * MiB, 64 * KiB);
    l->chunks_ = make_plan(plan, window, 64 * KiB);
  }

  l->trace_.mark(Trace::STAGING_MADE);
  // One copying submission per device: slot 0 (read) to slot 1 (write), whole views chosen per copy.
  for (rig_device d : l->devices_) {
    rig_part part{};
    part.size = sizeof part;
    part.kind = RIG_PART_COPY;
    part.src_slot = 0;
    part.dst_slot = 1;
    part.length = RIG_WHOLE;
    rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
    rig_submission s;
    if (rig_status st = rig_submission_make(d, &part, 1, access, 2, &s)) return st;
    l->copiers_.push_back(s);
  }
  Load *self = l.get();
  l->thread_ = std::thread([self] { self->run(); });
  *out = std::move(l);
  return RIG_OK;
}

Load::~Load() {
  cancel();
  if (thread_.joinable()) thread_.join();
  for (auto &t : tensors_)
    for (rig_buffer &b : t->buffers)
      if (b) rig_buffer_release(b), b = nullptr;
  for (rig_submission s : copiers_) rig_submission_release(s);
  for (auto *p : pools_)
    if (p) p->unclaim();
  if (direct_fd_ >= 0) ::close(direct_fd_);
}

bool Load::stopping(rig_status *why) {
  // The caller's flag is set by another thread (a progress callback runs on the copier, readers read it):
  // read atomically, as rig_load.h asks it to be written.
  if (cancelled_.load(std::memory_order_relaxed) || (options_.cancel && __atomic_load_n(options_.cancel, __ATOMIC_RELAXED)))
    if (!halted_.load(std::memory_order_acquire)) fail_with(fail(RIG_INTERRUPTED, "the load was cancelled"));
  *why = RIG_OK;
  if (!halted_.load(std::memory_order_acquire)) return false;  // the path every chunk takes: no lock
  std::lock_guard lock(mutex_);
  *why = status_;
  return true;
}

void Load::fail_with(rig_status s) {
  {
    std::lock_guard lock(mutex_);
    if (status_ == RIG_OK) {
      status_ = s;
      message_ = rig_last_error();
    }
    halted_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
  // Wake whatever waits inside the staged path: the copier for a chunk, readers for a staging chunk.
  { std::lock_guard lock(fill_mutex_); }
  fill_cv_.notify_all();
  for (auto *p : pools_)
    if (p) p->wake();
}

void Load::progress(uint64_t bytes) {
  std::lock_guard lock(progress_mutex_);  // not mutex_: the callback may block while rig_load_buffer waits
  // A window of the mapping covers whole pages, so its bytes can round out past the tensors' own: the
  // callback's contract is done <= total.
  bytes_done_ = std::min(bytes_done_ + bytes, bytes_total_);
  if (options_.progress) options_.progress(options_.progress_user, bytes_done_, bytes_total_);
}

rig_status Load::copy(size_t device, rig_buffer src, uint64_t src_offset, rig_buffer dst, uint64_t dst_offset,
                      uint64_t length) {
  if (length == 0) return RIG_OK;
  Timed timed(phase_ns_[SUBMIT]);  // views, run and submit: what a copy costs the thread
  rig_buffer from = nullptr, to = nullptr;
  rig_run run = nullptr;
  rig_status s = rig_buffer_view(src, src_offset, length, &from);
  if (!s) s = rig_buffer_view(dst, dst_offset, length, &to);
  if (!s) s = rig_run_take(copiers_[device], &run);
  if (!s) s = rig_run_set_buffer(run, 0, from);
  if (!s) s = rig_run_set_buffer(run, 1, to);
  if (!s) s = rig_submit(run, nullptr, 0, nullptr);
  std::string why = s ? rig_last_error() : "";  // the releases below clear the thread's message
  if (run) rig_run_release(run);
  if (to) rig_buffer_release(to);
  if (from) rig_buffer_release(from);
  if (s) return fail(s, "copying %llu bytes to placement device %zu: %s", (unsigned long long)length, device, why.c_str());
  bytes_copied_ += length;
  trace_.mark(Trace::FIRST_COPY);
  return RIG_OK;
}

rig_status Load::make_buffer(LoadTensor &t, size_t position) {
  std::lock_guard lock(t.make_mutex);
  if (t.buffers[position]) return RIG_OK;
  Timed timed(phase_ns_[ALLOC]);
  // A part of its arena; a buffer of its own, of the arena's kind, where the arena could not be made.
  rig_status s = arenas_[position]->make(devices_[position], by_file_index_[t.index] - 1, &t.buffers[position]);
  if (s == RIG_UNSUPPORTED)
    s = capi::buffer_create_any(devices_[position], t.length, arenas_[position]->memory(), &t.buffers[position]);
  if (s) return fail(s, "tensor '%s' (%llu bytes) on placement device %zu: %s", file_->tensors[t.index].name.c_str(),
                     (unsigned long long)t.length, position, rig_last_error());
  trace_.mark(Trace::FIRST_BUFFER);
  return RIG_OK;
}

rig_status Load::verify(LoadTensor &t, size_t position, uint64_t offset, uint64_t length, const unsigned char *reference) {
  std::vector<unsigned char> back(length);
  if (rig_status s = rig_buffer_read_into(t.buffers[position], offset, back.data(), length))
    return fail(s, "verify: reading back tensor '%s': %s", file_->tensors[t.index].name.c_str(), rig_last_error());
  if (XXH3_64bits(back.data(), length) != XXH3_64bits(reference, length))
    return fail(RIG_DRIVER, "verify: tensor '%s' bytes [%llu, +%llu) on placement device %zu differ from the file's "
                "(XXH3 of the device's copy against an independent pread)", file_->tensors[t.index].name.c_str(),
                (unsigned long long)offset, (unsigned long long)length, position);
  return RIG_OK;
}

// The other devices' copies of a tensor whose primary copy is submitted: device to device over a peer
// borrow of the primary buffer (the file is read once), then the tensor is handed out.
rig_status Load::finish_tensor(LoadTensor &t) {
  rig_buffer primary = t.buffers[t.devices[0]];
  for (size_t k = 1; k < t.devices.size(); ++k) {
    size_t pos = t.devices[k];
    if (rig_status s = make_buffer(t, pos)) return s;
    if (t.length) {
      rig_buffer peer;
      if (rig_status s = rig_buffer_borrow(devices_[pos], primary, &peer))
        return fail(s, "borrowing tensor '%s' for placement device %zu: %s", file_->tensors[t.index].name.c_str(), pos, rig_last_error());
      rig_status s = copy(pos, peer, 0, t.buffers[pos], 0, t.length);
      if (s) fail_with(s);  // keeps the message before the release clears it
      rig_buffer_release(peer);
      if (s) return s;
    }
  }
  std::lock_guard lock(mutex_);
  t.ready = true;
  if (first_tensor_s_ < 0) first_tensor_s_ = double(steady_ns() - t0_ns_) * 1e-9;
  trace_.mark(Trace::FIRST_TENSOR);
  cv_.notify_all();
  return RIG_OK;
}

rig_status Load::copy_chunk(const Chunk &c, rig_buffer src, const unsigned char *host_bytes) {
  std::vector<unsigned char> reference;
  for (const Piece &p : c.pieces) {
    LoadTensor &t = *tensors_[p.tensor];
    size_t primary = t.devices[0];
    if (rig_status s = make_buffer(t, primary)) return s;
    if (rig_status s = copy(primary, src, p.chunk_offset, t.buffers[primary], p.tensor_offset, p.length)) return s;
    if (options_.verify) {
      const unsigned char *ref = host_bytes ? host_bytes + p.chunk_offset : nullptr;
      if (!ref) {  // a window: the reference is read independently of the mapping
        reference.resize(p.length);
        if (rig_status s = read_fully(file_->fd, c.start + p.chunk_offset, reference.data(), p.length)) return s;
        ref = reference.data();
      }
      if (rig_status s = verify(t, primary, p.tensor_offset, p.length, ref)) return s;
    }
    if (t.remaining.fetch_sub(p.length, std::memory_order_acq_rel) == p.length)
      if (rig_status s = finish_tensor(t)) return s;
  }
  return RIG_OK;
}

rig_status Load::read_chunk(const Chunk &c, void *dst, DirectRead *reader) {
  uint64_t want = c.end - c.start;
  if (direct_fd_ < 0) {
    if (rig_status s = read_fully(file_->fd, c.start, dst, want)) return s;
    bytes_read_ += want;
    return RIG_OK;
  }
  size_t got = 0;
  if (rig_status s = reader->read(c.start, dst, round_up(want, direct_align), &got)) return s;
  if (got < want) return fail(RIG_INVALID_ARGUMENT, "the file ended at %llu, inside a tensor (it shrank?)", (unsigned long long)(c.start + got));
  bytes_read_ += got;
  return RIG_OK;
}

void Load::read_worker() {
  rig_status s = RIG_OK;
  std::optional<DirectRead> reader;  // this thread's ring, for O_DIRECT reads
  if (direct_fd_ >= 0) reader.emplace(direct_fd_);
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
      // The chunk's last copies are usually a few hundred microseconds from done: spin on the device's
      // timeline that long (a pure read) rather than let the export's wait sleep, whose slices the kernel
      // rounds up by its timer slack (50 us) and more; a reader has a core of its own (3/4 of them).
      rig_device device = devices_[c.device];
      uint64_t want = pool.last_value(slot), got = 0;
      for (uint64_t until = steady_ns() + 2000000;
           want && rig_device_signaled(device, &got) == RIG_OK && got < want && steady_ns() < until;)
        for (int k = 0; k < 32; ++k) cpu_relax();
      // Waits for every use of this staging chunk: the copies that read it last time (rule 6).
      s = rig_buffer_export(pool.buffer(slot), &host);
    }
    if (s) s = fail(s, "staging chunk: %s", rig_last_error());
    if (!s) {
      Timed timed(phase_ns_[READ]);
      s = read_chunk(c, host, reader ? &*reader : nullptr);
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

// Why one copier: with every reader submitting its own chunk's copies, 16 threads took turns on one
// device's turn and one driver stream, and each submit cost them 20-90 us of waiting (an H200, 8 GiB,
// 2026-12-01): the readers spent a third of their time there instead of reading. One thread submits in file
// order (the first tensors land first) and the readers only read.
void Load::copy_worker() {
  rig_status s = RIG_OK;
  size_t ahead = 0;  // chunks before this one have their tensors made
  for (size_t i = 0; i < chunks_.size() && !stopping(&s); ++i) {
    uint32_t v = filled_[i].load(std::memory_order_acquire);
    // A chunk takes tens to hundreds of microseconds to read: spin that long before sleeping, making the
    // tensors of the chunks ahead meanwhile. Why here: an allocation takes ~150 us on an H200 and holds
    // the driver's lock, so the readers making them slowed the copier's submits (0.68 of the link against
    // 0.9), and the copier making them only in line left the link idle behind a shallow queue.
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
    if (s) {
      fail_with(s);
      break;
    }
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
    s = copy_chunk(c, pool.buffer(v - 1), static_cast<const unsigned char *>(filled_host_[i]));
    uint64_t submitted = 0;  // at or past the chunk's copies: the next reader of this chunk spins up to it
    if (!s) rig_device_submitted(devices_[c.device], &submitted);
    pool.give_back(v - 1, submitted);
    if (s) {
      fail_with(s);
      break;
    }
    progress(c.end - c.start);
  }
}

// Chunks filled but never submitted (the load stopped): their staging goes back to the pool, which may be
// the caller's and outlive this load.
void Load::give_back_unsubmitted() {
  for (size_t i = 0; i < chunks_.size(); ++i)
    if (uint32_t v = filled_[i].exchange(0)) pools_[chunks_[i].device]->give_back(v - 1);
}

// Windows of the file's kept registration: views, so nothing is registered, mapped or released per window.
void Load::run_kept() {
  rig_status s = RIG_OK;
  uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  for (const Chunk &c : chunks_) {
    if (stopping(&s)) break;
    uint64_t length = std::min(round_up(c.end, page), round_up(file_->size, page)) - c.start;
    rig_buffer view = nullptr;
    s = rig_buffer_view(file_->kept_on(devices_[c.device]), c.start, length, &view);
    if (s) s = fail(s, "a window of the kept registration: %s", rig_last_error());
    if (!s) s = copy_chunk(c, view, nullptr);
    if (!s) s = file_->unchanged();
    if (s) fail_with(s);  // before the release below clears the thread's message
    if (view) rig_buffer_release(view);  // not the last handle: the registration stays
    if (s) break;
    bytes_read_ += length;
    progress(c.end - c.start);
  }
  if (s) fail_with(s);
}

void Load::run_windows() {
  if (kept_) return run_kept();
  // A read-only MAP_SHARED mapping of the whole file, shared by the windows wrapped over it (load/mapping.h).
  auto *m = new Mapping();
  m->length = file_->size;
  m->base = file_->size ? mmap(nullptr, file_->size, PROT_READ, MAP_SHARED, file_->fd, 0) : nullptr;
  if (m->base == MAP_FAILED) {
    delete m;
    fail_with(fail(RIG_DRIVER, "mmap %s: %s", file_->path.c_str(), strerror(errno)));
    return;
  }
  rig_status s = RIG_OK;
  uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  // Releasing a window's last handle waits for the copies that read it (rule 6), so the window before is
  // released only after the next one is registered and its copies submitted: release behind, by one.
  rig_buffer behind[2] = {nullptr, nullptr};
  auto release_behind = [&] {
    for (rig_buffer &b : behind)
      if (b) rig_buffer_release(b), b = nullptr;
  };
  for (const Chunk &c : chunks_) {
    if (stopping(&s)) break;
    uint64_t length = std::min(round_up(c.end, page), round_up(file_->size, page)) - c.start;
    rig_buffer window = nullptr, borrowed = nullptr;
    m->refs.fetch_add(1, std::memory_order_relaxed);
    s = rig_buffer_wrap(static_cast<char *>(m->base) + c.start, length, RIG_ACCESS_READ, drop_mapping, m, &window);
    if (s) {
      m->drop();
      s = fail(s, "wrapping a window of the mapping: %s", rig_last_error());
      break;
    }
    // Registers the window with the device's driver (or maps it, for a device that reads it directly);
    // the copies of the window before it are already on the device's queue, so this overlaps them.
    s = rig_buffer_borrow(devices_[c.device], window, &borrowed);
    if (s) s = fail(s, "registering a window of %llu bytes: %s", (unsigned long long)length, rig_last_error());
    if (!s) s = copy_chunk(c, borrowed, nullptr);
    if (!s) s = file_->unchanged();
    if (s) fail_with(s);  // before the releases below clear the thread's message
    release_behind();
    behind[0] = borrowed;
    behind[1] = window;  // unregistered and unmapped once the copies that read it are reached
    if (s) break;
    bytes_read_ += length;
    progress(c.end - c.start);
  }
  release_behind();
  m->drop();
  if (s) fail_with(s);
}

void Load::run() {
  trace_.mark(Trace::RUNNING);
  rig_status s = RIG_OK;
  for (auto &t : tensors_)  // empty tensors have no chunk: made and handed out now
    if (t->length == 0 && !s) {
      s = make_buffer(*t, t->devices[0]);
      if (!s) s = finish_tensor(*t);
    }
  if (s) fail_with(s);
  if (!s && path_ == RIG_LOAD_PATH_STAGED) {
    // 12 readers on an H200's 16 cores beat 14 and 16 (bench/README.md, 2026-12-01): the copier, the driver's
    // threads and the readers' own wakeups need cores of their own, or the copier's next chunk waits for a
    // reader the scheduler parked.
    uint32_t n = options_.threads ? options_.threads
                                  : std::clamp(std::thread::hardware_concurrency() * 3 / 4, 1u, uint32_t(RIG_LOAD_DEFAULT_THREADS_MAX));
    n = uint32_t(std::min<size_t>(n, chunks_.size()));
    filled_.reset(new std::atomic<uint32_t>[chunks_.size()]());
    filled_host_.assign(chunks_.size(), nullptr);
    std::vector<std::thread> readers;
    for (uint32_t i = 0; i < n; ++i) readers.emplace_back([this] { read_worker(); });
    copy_worker();
    trace_.mark(Trace::ALL_SUBMITTED);
    for (auto &r : readers) r.join();
    give_back_unsubmitted();
  } else if (!s) {
    run_windows();
    trace_.mark(Trace::ALL_SUBMITTED);
  }
  if (!stopping(&s)) {
    s = file_->unchanged();
    if (s) fail_with(s);
  }
  // A caller's pool is free for its next load from here; the staging made for this load goes once the
  // load is done (below).
  size_t staging = 0;
  for (auto *p : pools_)
    if (p) staging += p->bytes();
  for (auto *p : pools_)
    if (p) p->unclaim();
  pools_.clear();
  // Nothing half-loaded is handed out: once the load failed every buffer it still holds goes. Released
  // outside mutex_ (a release waits for the copies into the buffer, and no wait holds the load's lock);
  // rig_load_buffer reads the status under mutex_ first, so it never reaches a buffer released here.
  bool failed;
  {
    std::lock_guard lock(mutex_);
    failed = status_ != RIG_OK;  // set once, never cleared: still true below
  }
  if (failed)
    for (auto &t : tensors_)
      for (rig_buffer &b : t->buffers)
        if (b) rig_buffer_release(b), b = nullptr;
  {
    std::lock_guard lock(mutex_);
    seconds_ = double(steady_ns() - t0_ns_) * 1e-9;
    staging_used_ = staging;
    done_ = true;
    trace_.mark(Trace::DONE);
    cv_.notify_all();
  }
  // The staging made for this load goes after rig_load_wait has returned (rig_load_release joins this
  // thread, so it is gone by then, as rig_load.h says): its release waits for the copies that read it and
  // then unregisters and unmaps it, 2-3 ms of a 4 GiB first load's 87-89 on an H200 (RIG_LOAD_TRACE,
  // 2026-12-02) that no caller waits for.
  own_pools_.clear();
  trace_.mark(Trace::STAGING_RELEASED);
}

rig_status Load::buffer(size_t index, size_t device, rig_buffer *out) {
  if (index >= by_file_index_.size() || !by_file_index_[index])
    return fail(RIG_INVALID_ARGUMENT, "tensor %zu is not in this load", index);
  LoadTensor &t = *tensors_[by_file_index_[index] - 1];
  if (device >= devices_.size() || std::find(t.devices.begin(), t.devices.end(), device) == t.devices.end())
    return fail(RIG_INVALID_ARGUMENT, "tensor %zu is not placed on placement device %zu", index, device);
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return status_ != RIG_OK || t.ready; });
  if (status_ != RIG_OK) return fail(status_, "%s", message_.c_str());
  rig_status s = rig_buffer_view(t.buffers[device], 0, t.length, out);
  if (s) return fail(s, "%s", rig_last_error());
  return RIG_OK;
}

rig_status Load::wait() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return done_; });
  if (status_ != RIG_OK) return fail(status_, "%s", message_.c_str());
  return RIG_OK;
}

rig_status Load::stats(rig_load_stats *caller) {
  std::lock_guard lock(mutex_);
  if (!done_) return fail(RIG_BUSY, "the load is still running");
  rig_load_stats all{};
  rig_load_stats *out = &all;
  out->size = caller->size;
  out->path = path_;
  out->why = why_.c_str();
  out->direct_io = direct_fd_ >= 0;
  out->bytes_total = bytes_total_;
  out->bytes_read = bytes_read_;
  out->bytes_copied = bytes_copied_;
  out->seconds = seconds_;
  out->first_tensor_seconds = first_tensor_s_ < 0 ? 0 : first_tensor_s_;
  out->staging_bytes = staging_used_;
  out->read_seconds = double(phase_ns_[READ]) * 1e-9;
  out->staging_wait_seconds = double(phase_ns_[STAGING_WAIT]) * 1e-9;
  out->alloc_seconds = double(phase_ns_[ALLOC]) * 1e-9;
  out->submit_seconds = double(phase_ns_[SUBMIT]) * 1e-9;
  memcpy(caller, &all, std::min(caller->size, sizeof all));
  return RIG_OK;
}

}  // namespace rig::load
