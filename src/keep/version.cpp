#include "keep/version.h"

#include "core/allocation.h"
#include "core/error.h"
#include "core/point.h"
#include "core/registry.h"
#include "interop/operations.h"
#include "keep/shared_memory.h"
#include "load/checkpoint.h"

namespace rig::keep {

rig_status Version::start(const std::string &checkpoint, const std::vector<Device *> &devices, uint64_t generation,
                          const Publishing &how, std::shared_ptr<Version> *out) {
  std::shared_ptr<Version> v(new Version);
  v->how_ = how;
  v->devices_ = devices;
  for (Device *d : devices) {
    int memory = 0, event = 0, fds = 0;
    if (interop::supported(*d, nullptr, RIG_INTEROP_IPC_MEMORY, &memory) != RIG_OK ||
        interop::supported(*d, nullptr, RIG_INTEROP_IPC_EVENT, &event) != RIG_OK ||
        interop::supported(*d, nullptr, RIG_INTEROP_MEMORY_FD, &fds) != RIG_OK)
      return RIG_INVALID_ARGUMENT;
    MemoryKind kind = d->kind() == RIG_DEVICE_MEMORY ? MemoryKind::memfd
                      : memory && event              ? MemoryKind::ipc
                      : fds                          ? MemoryKind::fd
                                                     : MemoryKind(0);
    if (kind == MemoryKind(0))
      return fail(RIG_UNSUPPORTED, "keep_start: %s's tensors cannot leave the process: a keeper serves memory devices "
                  "(memfd), devices with IPC memory and events (CUDA, HIP) and devices with memory fds (Vulkan's "
                  "VK_KHR_external_memory_fd)", d->info().name.c_str());
    v->kinds_.push_back(kind);
    std::unique_ptr<load::Copier> c;
    if (rig_status s = load::Copier::make(*d, &c)) return s;
    v->copiers_.push_back(std::move(c));
  }
  std::shared_ptr<load::File> file;
  if (rig_status s = load::open_checkpoint(checkpoint.c_str(), RIG_LOAD_FORMAT_AUTO, &file)) return s;
  v->table_.generation = generation;
  // Named as rig_device_open takes them: a memory device's own name is any string ("memory:" + it).
  for (Device *d : devices) {
    const std::string &n = d->info().name;
    v->table_.devices.push_back(n.find(':') == std::string::npos ? d->info().framework + ":" + n : n);
  }
  for (const load::TensorEntry &t : file->tensors)
    v->table_.tensors.push_back({t.name, t.dtype, t.ggml_type, t.shape, t.length});
  v->exported_.resize(file->tensors.size() * devices.size());
  // Each GPU's tensors laid out in file order in arenas of plain device memory (never the reuse pool's:
  // its memory has no IPC handle), as the loader lays out its own (load/arenas.h).
  std::vector<size_t> order(file->tensors.size());
  std::vector<uint64_t> lengths(file->tensors.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    lengths[i] = file->tensors[i].length;
  }
  v->memory_.resize(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    if (v->kinds_[d] == MemoryKind::memfd) continue;
    DeviceMemory &m = v->memory_[d];
    m.arenas = std::make_unique<load::Arenas>(order.size(), order, lengths, RIG_LOAD_DEFAULT_ARENA_BYTES,
                                              RIG_MEMORY_DEVICE);
    m.regions.resize(m.arenas->count());
  }
  rig_load_placement placement{};
  placement.size = sizeof placement;
  placement.device_count = devices.size();
  placement.rule = RIG_LOAD_RULE_EACH;
  rig_load_options options{};
  options.size = sizeof options;
  if (rig_status s = load::Load::start(host_device(), file, nullptr, 0, devices, placement, options, {}, &v->load_))
    return s;
  v->thread_ = std::thread([raw = v.get()] { raw->publish_all(); });
  *out = std::move(v);
  return RIG_OK;
}

void Version::cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = true;
  cv_.notify_all();
  if (load_) load_->cancel();  // an atomic flag: the load's threads stop at their next step
}

Version::~Version() {
  cancel();
  if (thread_.joinable()) thread_.join();
  // Every connection that imported these points has let go (it held the version): their events may go.
  for (Exported &e : exported_)
    if (e.point_exported && interop::close_point_ipc(e.point) != RIG_OK) clear_error();
}

// The copy into the memfd is this device's own work, after the load's copies into the tensor (rule 3 on
// the tensor's stamps); a memory device runs it at hand-over, and the wait below makes that a promise: a
// memfd is only ever sent holding the file's bytes, since its receiver has no point to follow.
rig_status Version::publish_memfd(size_t index, size_t device, const Buffer &loaded, Exported *e) {
  std::shared_ptr<Buffer> shared;
  uint64_t length = table_.tensors[index].length;
  if (rig_status s = make_shared_memory(*devices_[device], length, how_.writable, &e->fd, &shared)) return s;
  if (length) {
    if (rig_status s = copiers_[device]->copy(loaded, 0, *shared, 0, length)) return s;
    if (rig_status s = shared->allocation->wait_last_write()) return s;
  }
  e->buffer = std::move(shared);
  return RIG_OK;
}

// Tensor `index`'s part on `device` and its region: its arena's, the arena made and exported whole with its
// first tensor. A tensor with no part (an empty one) or whose arena the driver refused (out of memory, or
// past its largest allocation) gets a buffer of its own instead, exported as a region of its own: the load
// goes on, as the loader's does (load/arenas.h), and fails only where that allocation fails too, saying
// why. An empty tensor's buffer has a byte (IPC shares no empty memory).
rig_status Version::part_for(size_t index, size_t device, std::shared_ptr<Buffer> *part, Exported *e) {
  DeviceMemory &m = memory_[device];
  Device &d = *devices_[device];
  size_t arena = 0;
  uint64_t start = 0;
  if (m.arenas->place(index, &arena, &start)) {
    rig_status made = m.arenas->make(d, index, part);
    if (made != RIG_OK && made != RIG_UNSUPPORTED) return made;
    if (made == RIG_OK) {
      Region &r = m.regions[arena];
      if (!r.whole)
        if (rig_status s = export_region(device, m.arenas->whole(arena), &r)) return s;
      e->region = uint32_t(arena);
      e->offset = start;
      e->memory = r.memory;
      e->region_fd = r.fd.get();
      e->region_length = r.length;
      return RIG_OK;
    }
  }
  uint64_t length = table_.tensors[index].length;
  Region r;
  std::shared_ptr<Buffer> own;
  if (rig_status s = buffer_create(d, length ? length : 1, RIG_MEMORY_DEVICE, &own)) return s;
  if (rig_status s = export_region(device, own->allocation, &r)) return s;
  e->region = uint32_t(m.regions.size());
  e->offset = 0;
  e->memory = r.memory;
  e->region_fd = r.fd.get();
  e->region_length = r.length;
  *part = std::move(own);
  m.regions.push_back(std::move(r));
  return RIG_OK;
}

// Region `r` over the allocation `whole`, exported as its device's tensors leave: an IPC handle (over a
// part that spans it, as the arena's tensors are parts), or a memory fd (over the allocation itself: a
// descriptor carries a whole allocation, never a part).
rig_status Version::export_region(size_t device, std::shared_ptr<Allocation> whole, Region *r) {
  std::shared_ptr<Buffer> b;
  if (kinds_[device] == MemoryKind::fd) {
    b = interop::buffer_over(*devices_[device], std::move(whole));
    int fd = -1;
    size_t length = 0;
    if (rig_status s = interop::export_memory_fd(*b, &fd, &length)) return s;
    r->fd = Fd(fd);
    r->length = length;
  } else {
    if (rig_status s = buffer_part(whole, 0, whole->length(), &b)) return s;
    if (rig_status s = interop::export_memory_ipc(*b, &r->memory)) return s;
    r->length = whole->length();
  }
  r->whole = std::move(b);
  return RIG_OK;
}

// The tensor's part and the copy into it submitted. IPC: the copy's point exported, and the client's queue
// waits for that point, so the tensor is sent before its bytes are there (an empty tensor has no point).
// A memory fd: the copy waited for here, as a memfd's is (publish_memfd), since a point would need a
// semaphore fd of its own beside the memory's; the tensor still leaves as soon as its own copy is in.
rig_status Version::publish_part(size_t index, size_t device, const Buffer &loaded, Exported *e) {
  std::shared_ptr<Buffer> part;
  if (rig_status s = part_for(index, device, &part, e)) return s;
  uint64_t length = table_.tensors[index].length;
  if (length) {
    if (rig_status s = copiers_[device]->copy(loaded, 0, *part, 0, length)) return s;
    if (kinds_[device] == MemoryKind::fd) {
      if (rig_status s = part->allocation->wait_last_write()) return s;
    } else {
      if (rig_status s = interop::last_write(*part, &e->copied)) return s;
      if (rig_status s = interop::export_point_ipc(e->copied, &e->point)) return s;
      e->point_exported = true;
    }
  }
  e->buffer = std::move(part);
  return RIG_OK;
}

rig_status Version::publish(size_t index, size_t device) {
  std::shared_ptr<Buffer> loaded;
  if (rig_status s = load_->buffer(index, device, &loaded)) return s;
  Exported e;
  rig_status s = kinds_[device] == MemoryKind::memfd ? publish_memfd(index, device, *loaded, &e)
                                                     : publish_part(index, device, *loaded, &e);
  std::lock_guard<std::mutex> lock(mutex_);
  exported_[index * devices_.size() + device] = std::move(e);  // kept on failure too: its export is closed
  return s;
}

void Version::publish_all() {
  rig_status s = RIG_OK;
  for (size_t i = 0; i < table_.tensors.size() && s == RIG_OK; ++i) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) s = fail(RIG_INTERRUPTED, "keep: the keeper stopped while loading");
    }
    if (s == RIG_OK && how_.before_publish) how_.before_publish(how_.user, i);
    for (size_t d = 0; d < devices_.size() && s == RIG_OK; ++d) s = publish(i, d);
    std::lock_guard<std::mutex> lock(mutex_);
    if (s == RIG_OK) ++ready_;
    cv_.notify_all();
  }
  // The loader keeps every tensor it made until it is released: its copy of the checkpoint goes now.
  std::unique_ptr<load::Load> loaded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    loaded = std::move(load_);
  }
  loaded.reset();
  if (how_.log)
    how_.log(s == RIG_OK ? "generation " + std::to_string(table_.generation) + " loaded: " +
                               std::to_string(table_.tensors.size()) + " tensors published"
                         : std::string("the load failed: ") + last_error());
  std::lock_guard<std::mutex> lock(mutex_);
  if (s != RIG_OK) {
    status_ = s;
    message_ = last_error();
  }
  ready_ = s == RIG_OK ? table_.tensors.size() : ready_;
  stopping_ = true;  // nothing more comes: waiters stop waiting
  finished_ = true;
  cv_.notify_all();
}

rig_status Version::published(size_t index, size_t device, TensorReply *reply, int *fd) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return ready_ > index || stopping_; });
  if (ready_ <= index) {
    if (status_ != RIG_OK) return fail(status_, "%s", message_.c_str());
    return fail(RIG_INTERRUPTED, "keep: the keeper stopped before tensor %zu was loaded", index);
  }
  // A published entry never changes again and the vector never grows: read on without the lock, so that
  // the driver's question below holds up no other connection.
  lock.unlock();
  const Exported &e = exported_[index * devices_.size() + device];
  reply->index = uint32_t(index);
  reply->device = uint32_t(device);
  reply->length = table_.tensors[index].length;
  reply->kind = kinds_[device];
  reply->flags = how_.writable ? kFlagWritable : 0;
  reply->arena = e.region;
  reply->offset = e.offset;
  reply->memory = e.memory;
  reply->region_length = e.region_length;
  // A copy already reached leaves nothing to wait for: its point goes as zeros, and the client imports no
  // event for it (a client attaching after the load imports none at all). One not reached yet goes as its
  // handle, which the client's queue waits on.
  if (e.copied && !device_at(point_device(e.copied))->reached(point_value(e.copied))) reply->point = e.point;
  else reply->point = rig_ipc_handle{};
  *fd = reply->kind == MemoryKind::fd ? e.region_fd : e.fd.get();
  return RIG_OK;
}

rig_status Version::wait_all() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return finished_; });
  if (status_ != RIG_OK) return fail(status_, "%s", message_.c_str());
  return RIG_OK;
}

}  // namespace rig::keep
