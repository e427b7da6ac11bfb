// A load's run: decide the path, read the file once, copy every byte with core's submits, hand each tensor
// out as soon as its copies are submitted. Ordering is the stamps' job: each tensor has its own
// allocation per device (a part of an arena, load/arenas.h: stamps of its own), so work reading tensor k
// follows the copies into k and nothing else (rule 3); a staging chunk is reused only after buffer_export
// waited for the copy that read it (rule 6). The staged path's roles are in load/staged.cpp, the windows'
// in load/windows.cpp.
#include "load/load.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "core/buffer.h"
#include "core/deadline.h"
#include "core/device.h"
#include "core/driver_memory.h"
#include "core/error.h"
#include "load/direct_read.h"

namespace rig::load {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

Load::Timed::Timed(std::atomic<uint64_t> &to) : to(to), t0(steady_ns()) {}
Load::Timed::~Timed() { to.fetch_add(steady_ns() - t0, std::memory_order_relaxed); }

rig_status Load::start(Device &host, std::shared_ptr<File> file, const size_t *selected, size_t count,
                       std::vector<Device *> devices, const rig_load_placement &placement,
                       const rig_load_options &options, std::vector<std::shared_ptr<StagingPool>> pools,
                       std::unique_ptr<Load> *out) {
  std::unique_ptr<Load> l(new Load());
  // rig_load_stats' seconds count from here (rig_load.h): the plan, the residency sample and a staging
  // pool made for this load are the load's time too.
  l->t0_ns_ = steady_ns();
  l->trace_.begin(l->t0_ns_);
  l->host_ = &host;
  l->file_ = file;
  l->options_ = options;
  l->options_.pools = nullptr;  // handles of the C face: resolved into `pools`
  l->given_pools_ = std::move(pools);
  const rig_load_options &o = l->options_;
  if (rig_status s = l->take_devices(std::move(devices))) return s;
  if (o.io < RIG_LOAD_IO_AUTO || o.io > RIG_LOAD_IO_DIRECT) return fail(RIG_INVALID_ARGUMENT, "unknown io %d", int(o.io));
  if (rig_status s = l->place_selection(selected, count, placement)) return s;
  if (rig_status s = file->unchanged()) return s;
  // Chunks (staged) or windows (registered, direct).
  std::vector<PlanTensor> plan;
  uint64_t lo = UINT64_MAX, hi = 0;
  bool gathered = false;
  for (const auto &t : l->tensors_) {
    const Extent &x = t->extent;
    plan.push_back(PlanTensor{x, t->devices[0], file->tensors[t->index].shard});
    if (t->length) lo = std::min(lo, x.offset), hi = std::max(hi, x.offset + (x.count - 1) * x.stride + x.run);
    gathered |= x.count > 1;
  }
  if (rig_status s = gathered ? gather_route(o.path, &l->route_) : choose_path(l->devices_, *file, o.path, &l->route_))
    return s;
  l->trace_.mark(Trace::PLANNED);
  if (l->route_.path != RIG_LOAD_PATH_STAGED) l->plan_windows(plan);
  else if (rig_status s = l->plan_staged(plan, lo, hi)) return s;
  l->trace_.mark(Trace::STAGING_MADE);
  if (rig_status s = l->make_copiers()) return s;
  Load *self = l.get();
  l->thread_ = std::thread([self] { self->run(); });
  *out = std::move(l);
  return RIG_OK;
}

// The placement's devices, each once, and the caller's pool of each (given_), if any.
rig_status Load::take_devices(std::vector<Device *> devices) {
  for (size_t i = 0; i < devices.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (devices[j] == devices[i]) return fail(RIG_INVALID_ARGUMENT, "placement device %zu appears twice", i);
    given_.push_back(nullptr);
    for (const auto &pool : given_pools_)
      if (pool && &pool->device() == devices[i]) given_.back() = pool.get();
  }
  devices_ = std::move(devices);
  return RIG_OK;
}

// The selection placed (plan.h's place), then each device's tensors as parts of a few allocations
// (load/arenas.h), laid out in file order. Where the caller loads again (it keeps a staging pool for the
// device, given_, or keeps the file registered on it), from the device's reuse pool (core/driver_memory.h):
// memory the device keeps at the tensors' frees, so a later load's copies land in memory no free gave back
// to the driver, which they reach faster (bench/README.md, bench/load: memory the driver gave again held a
// kept registration's reload to 0.89 of the link). A load that says nothing of loading again takes memory
// that goes back at its free: kept memory is hidden from the program's other allocators until memory runs
// out or the device is released.
rig_status Load::place_selection(const size_t *selected, size_t count, const rig_load_placement &placement) {
  std::vector<Placed> placed;
  if (rig_status s = place(file_->tensors, selected, count, placement, devices_.size(), &placed)) return s;
  uint64_t limit = options_.arena_bytes ? options_.arena_bytes : RIG_LOAD_DEFAULT_ARENA_BYTES;
  for (size_t d = 0; d < devices_.size(); ++d) {
    std::vector<size_t> order;
    std::vector<uint64_t> lengths;
    arena_order(placed, d, &order, &lengths);
    bool again = given_[d] || file_->kept_on(*devices_[d]);
    arenas_.push_back(std::make_unique<Arenas>(placed.size(), order, lengths, limit,
                                               again ? kMemoryDeviceReused : RIG_MEMORY_DEVICE));
  }
  by_file_index_.assign(file_->tensors.size(), 0);
  for (size_t i = 0; i < placed.size(); ++i) {
    if (!by_file_index_[placed[i].index]) by_file_index_[placed[i].index] = i + 1;  // a tensor's parts follow
    bytes_total_ += placed[i].length;
    auto t = std::make_unique<LoadTensor>(std::move(placed[i]), i);
    t->buffers.assign(devices_.size(), nullptr);
    tensors_.push_back(std::move(t));
  }
  return RIG_OK;
}

// Readers on 3/4 of the cores: the copier, the driver's threads and the readers' own wakeups need cores of
// their own, or the copier's next chunk waits for a reader the scheduler parked (bench/README.md,
// bench/load).
uint32_t Load::readers() const {
  return options_.threads ? options_.threads
                          : std::clamp(std::thread::hardware_concurrency() * 3 / 4, 1u, uint32_t(RIG_LOAD_DEFAULT_THREADS_MAX));
}

// Staged: reads bypass the page cache where the path policy says (open_direct), chunks fit the caller's
// pools' chunks, and every device that reads has its staging (stage).
rig_status Load::plan_staged(const std::vector<PlanTensor> &plan, uint64_t lo, uint64_t hi) {
  direct_fds_ = open_direct(*file_, options_.io, lo, hi, readers(), &route_.why);
  if (!direct_fds_.empty()) align_ = direct_align;
  uint64_t chunk = round_up(options_.chunk_bytes ? options_.chunk_bytes : RIG_LOAD_DEFAULT_CHUNK_BYTES, 64 * KiB);
  uint64_t slack = align_ > 1 ? align_ : 0;
  for (auto *p : given_)
    if (p) chunk = std::min<uint64_t>(chunk, p->chunk_bytes() > slack + 64 * KiB ? p->chunk_bytes() - slack : 64 * KiB);
  chunks_ = make_plan(plan, chunk, align_);
  std::vector<size_t> chunks_of(devices_.size(), 0);
  for (const auto &c : chunks_) chunks_of[c.device]++;
  uint64_t budget = options_.staging_bytes ? options_.staging_bytes : RIG_LOAD_DEFAULT_STAGING_BYTES;
  return stage(devices_, *host_, given_, chunks_of, chunk + slack, budget, &pools_, &own_pools_);
}

void Load::plan_windows(const std::vector<PlanTensor> &plan) {
  uint64_t window = round_up(options_.window_bytes ? options_.window_bytes : 256 * MiB, 64 * KiB);
  chunks_ = make_plan(plan, window, 64 * KiB);
}

rig_status Load::make_copiers() {
  for (Device *d : devices_) {
    copiers_.emplace_back();
    if (rig_status s = Copier::make(*d, &copiers_.back())) return s;
  }
  return RIG_OK;
}

Load::~Load() {
  cancel();
  if (thread_.joinable()) thread_.join();
  for (auto &t : tensors_) t->buffers.clear();
  copiers_.clear();
  for (auto *p : pools_)
    if (p) p->unclaim();
  for (int fd : direct_fds_) ::close(fd);
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
      message_ = last_error();
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

rig_status Load::copy(size_t device, const Buffer &src, uint64_t src_offset, const Buffer &dst, uint64_t dst_offset,
                      uint64_t length) {
  if (length == 0) return RIG_OK;
  Timed timed(phase_ns_[SUBMIT]);  // the views' binding and the submit: what a copy costs the thread
  if (rig_status s = copiers_[device]->copy(src, src_offset, dst, dst_offset, length))
    return fail(s, "copying %llu bytes to placement device %zu: %s", (unsigned long long)length, device, last_error());
  bytes_copied_ += length;
  trace_.mark(Trace::FIRST_COPY);
  return RIG_OK;
}

rig_status Load::flush_copies() {
  Timed timed(phase_ns_[SUBMIT]);
  for (size_t d = 0; d < copiers_.size(); ++d) {
    if (!copiers_[d] || !copiers_[d]->pending()) continue;
    if (rig_status s = copiers_[d]->flush())
      return fail(s, "copying to placement device %zu: %s", d, last_error());
    trace_.mark(Trace::FIRST_COPY);
  }
  return RIG_OK;
}

rig_status Load::settle(std::vector<LoadTensor *> *done) {
  rig_status s = flush_copies();
  // A tensor is handed out only once its copies are submitted, so that work on it follows them (rule 3).
  for (LoadTensor *t : *done)
    if (!s) s = finish_tensor(*t);
  done->clear();
  return s;
}

rig_status Load::make_buffer(LoadTensor &t, size_t position) {
  std::lock_guard lock(t.make_mutex);
  if (t.buffers[position]) return RIG_OK;
  Timed timed(phase_ns_[ALLOC]);
  // A part of its arena; a buffer of its own, of the arena's kind, where the arena could not be made.
  Device &device = *devices_[position];
  rig_status s = arenas_[position]->make(device, t.position, &t.buffers[position]);
  if (s == RIG_UNSUPPORTED) s = buffer_create(device, t.length, arenas_[position]->memory(), &t.buffers[position]);
  if (s) return fail(s, "tensor '%s' (%llu bytes) on placement device %zu: %s", file_->tensors[t.index].name.c_str(),
                     (unsigned long long)t.length, position, last_error());
  trace_.mark(Trace::FIRST_BUFFER);
  return RIG_OK;
}

rig_status Load::verify(LoadTensor &t, size_t position, uint64_t offset, uint64_t length, const unsigned char *reference) {
  std::vector<unsigned char> back(length);
  if (rig_status s = buffer_read_into(*t.buffers[position], offset, back.data(), length))
    return fail(s, "verify: reading back tensor '%s': %s", file_->tensors[t.index].name.c_str(), last_error());
  if (XXH3_64bits(back.data(), length) != XXH3_64bits(reference, length))
    return fail(RIG_DRIVER, "verify: tensor '%s' bytes [%llu, +%llu) on placement device %zu differ from the file's "
                "(XXH3 of the device's copy against an independent pread)", file_->tensors[t.index].name.c_str(),
                (unsigned long long)offset, (unsigned long long)length, position);
  return RIG_OK;
}

// The other devices' copies of a tensor whose primary copy is submitted: device to device over a peer
// borrow of the primary buffer (the file is read once), then the tensor is handed out.
rig_status Load::finish_tensor(LoadTensor &t) {
  const Buffer &primary = *t.buffers[t.devices[0]];
  for (size_t k = 1; k < t.devices.size(); ++k) {
    size_t pos = t.devices[k];
    if (rig_status s = make_buffer(t, pos)) return s;
    if (t.length) {
      std::shared_ptr<Buffer> peer;  // not the last reference: the primary buffer holds the allocation
      if (rig_status s = buffer_borrow(*devices_[pos], primary, &peer))
        return fail(s, "borrowing tensor '%s' for placement device %zu: %s", file_->tensors[t.index].name.c_str(), pos, last_error());
      if (rig_status s = copy(pos, *peer, 0, *t.buffers[pos], 0, t.length)) return s;
    }
  }
  std::lock_guard lock(mutex_);
  t.ready = true;
  if (first_tensor_s_ < 0) first_tensor_s_ = double(steady_ns() - t0_ns_) * 1e-9;
  trace_.mark(Trace::FIRST_TENSOR);
  cv_.notify_all();
  return RIG_OK;
}

rig_status Load::copy_chunk(const Chunk &c, const Buffer &src, const unsigned char *host_bytes,
                            std::vector<LoadTensor *> *done) {
  std::vector<unsigned char> reference;
  for (const Piece &p : c.pieces) {
    LoadTensor &t = *tensors_[p.tensor];
    size_t primary = t.devices[0];
    if (rig_status s = make_buffer(t, primary)) return s;
    if (p.length) {
      Timed timed(phase_ns_[SUBMIT]);  // the views' binding, and the batch's submit where this fills it
      if (rig_status s = copiers_[primary]->add(src, p.chunk_offset, *t.buffers[primary], p.tensor_offset, p.length))
        return fail(s, "copying %llu bytes to placement device %zu: %s", (unsigned long long)p.length, primary,
                    last_error());
      bytes_copied_ += p.length;
      if (!copiers_[primary]->pending()) trace_.mark(Trace::FIRST_COPY);  // the add filled the batch: submitted
    }
    if (options_.verify) {  // reads the copy back: submitted first
      if (rig_status s = flush_copies()) return s;
      const unsigned char *ref = host_bytes ? host_bytes + p.chunk_offset : nullptr;
      if (!ref) {  // a window: the reference is read independently of the mapping
        reference.resize(p.length);
        if (rig_status s = file_->read(c.start + p.chunk_offset, reference.data(), p.length)) return s;
        ref = reference.data();
      }
      if (rig_status s = verify(t, primary, p.tensor_offset, p.length, ref)) return s;
    }
    if (t.remaining.fetch_sub(p.length, std::memory_order_acq_rel) == p.length) done->push_back(&t);
  }
  return RIG_OK;
}

void Load::run() {
  trace_.mark(Trace::RUNNING);
  run_paths();
  rig_status s = RIG_OK;
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
  // outside mutex_ (a buffer's end waits for the copies into it, and no wait holds the load's lock);
  // buffer() reads the status under mutex_ first, so it never reaches a buffer released here.
  bool failed;
  {
    std::lock_guard lock(mutex_);
    failed = status_ != RIG_OK;  // set once, never cleared: still true below
  }
  if (failed)
    for (auto &t : tensors_)
      for (auto &b : t->buffers) b.reset();
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
  // then unregisters and unmaps it, a few milliseconds of a first load (RIG_LOAD_TRACE, bench/README.md,
  // bench/load) that no caller waits for.
  own_pools_.clear();
  trace_.mark(Trace::STAGING_RELEASED);
}

// The path's work: the empty tensors handed out, then the staged path's readers and copier, or the windows.
void Load::run_paths() {
  rig_status s = RIG_OK;
  guarded([&] {
    for (auto &t : tensors_)  // empty tensors have no chunk: made and handed out now
      if (t->length == 0 && !s) {
        s = make_buffer(*t, t->devices[0]);
        if (!s) s = finish_tensor(*t);
      }
    if (s) fail_with(s);
  });
  if (stopping(&s)) return;
  if (route_.path != RIG_LOAD_PATH_STAGED) {
    guarded([this] { run_windows(); });
    trace_.mark(Trace::ALL_SUBMITTED);
    return;
  }
  uint32_t n = uint32_t(std::min<size_t>(readers(), chunks_.size()));
  guarded([&] {
    filled_.reset(new std::atomic<uint32_t>[chunks_.size()]());
    filled_host_.assign(chunks_.size(), nullptr);
  });
  if (stopping(&s)) return;
  std::vector<std::thread> readers;
  guarded([&] {
    for (uint32_t i = 0; i < n; ++i) readers.emplace_back([this] { guarded([this] { read_worker(); }); });
  });
  guarded([this] { copy_worker(); });
  trace_.mark(Trace::ALL_SUBMITTED);
  for (auto &r : readers) r.join();
  give_back_unsubmitted();
}

rig_status Load::part_of(size_t index, size_t device, LoadTensor **out) {
  if (index >= by_file_index_.size() || !by_file_index_[index])
    return fail(RIG_INVALID_ARGUMENT, "tensor %zu is not in this load", index);
  for (size_t p = by_file_index_[index] - 1; p < tensors_.size() && tensors_[p]->index == index; ++p) {
    const auto &on = tensors_[p]->devices;
    if (std::find(on.begin(), on.end(), device) != on.end()) {
      *out = tensors_[p].get();
      return RIG_OK;
    }
  }
  return fail(RIG_INVALID_ARGUMENT, "tensor %zu is not placed on placement device %zu", index, device);
}

rig_status Load::slice(size_t index, size_t device, rig_load_slice *out) {
  LoadTensor *t;
  if (rig_status s = part_of(index, device, &t)) return s;
  *out = t->slice;
  out->device = device;  // a whole tensor's part is on every device of its
  return RIG_OK;
}

rig_status Load::buffer(size_t index, size_t device, std::shared_ptr<Buffer> *out) {
  LoadTensor *part;
  if (rig_status s = part_of(index, device, &part)) return s;
  LoadTensor &t = *part;
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return status_ != RIG_OK || t.ready; });
  if (status_ != RIG_OK) return fail(status_, "%s", message_.c_str());
  return buffer_view(*t.buffers[device], 0, t.length, out);
}

rig_status Load::wait() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return done_; });
  if (status_ != RIG_OK) return fail(status_, "%s", message_.c_str());
  return RIG_OK;
}

rig_status Load::stats(rig_load_stats *out) {
  std::lock_guard lock(mutex_);
  if (!done_) return fail(RIG_BUSY, "the load is still running");
  *out = rig_load_stats{};
  out->size = sizeof *out;
  out->path = route_.path;
  out->why = route_.why.c_str();
  out->direct_io = !direct_fds_.empty();
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
  return RIG_OK;
}

}  // namespace rig::load
