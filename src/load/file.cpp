// Opening a weights file: read the header with pread (doubling the read until the parser has what it
// needs, within the format's limit), parse it, check it against the file.
#include "load/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/buffer.h"
#include "core/device.h"
#include "core/error.h"
#include "load/guarded_mapping.h"
#include "load/regular_file.h"

namespace rig::load {

// The registrations go once no copy reads them (rule 6, the allocations' end), and their mappings with them.
File::~File() { kept_.clear(); }

Shard::~Shard() {
  if (fd >= 0) ::close(fd);
}

namespace {

void unmap_kept(void *user) {
  auto *m = static_cast<std::pair<void *, size_t> *>(user);
  unmap_guarded(m->first, m->second);
  delete m;
}

// The words for a kept mapping of `shard` that read zeros where its file had no page; RIG_OK where none did.
rig_status kept_fault(const Shard &shard, void *base) {
  uint64_t missing;
  if (!guarded_fault(base, &missing)) return RIG_OK;
  return fail(RIG_INVALID_ARGUMENT, "the file %s could not be read through its kept registration's mapping at offset "
              "%llu (it shrank, or the read failed): bytes copied from there are not the file's", shard.path.c_str(),
              (unsigned long long)missing);
}

// Maps `shard` whole (guarded: a page the file loses reads zeros, not SIGBUS), wraps it on `host` and
// borrows it on `device`: the driver registers it once. *base: the mapping.
rig_status keep_shard(const Shard &shard, Device &device, Device &host, std::shared_ptr<Buffer> *out, void **base_out) {
  const std::string &name = device.info().name;
  if (shard.size == 0) return fail(RIG_INVALID_ARGUMENT, "keep registered: %s is empty", shard.path.c_str());
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  size_t length = (shard.size + page - 1) / page * page;
  void *base = map_guarded(shard.fd, length);
  if (base == MAP_FAILED) return fail(RIG_DRIVER, "keep registered: mmap %s: %s", shard.path.c_str(), strerror(errno));
  std::pair<void *, size_t> *mapping;
  try {
    mapping = new std::pair<void *, size_t>(base, length);
  } catch (...) {
    unmap_guarded(base, length);
    throw;
  }
  std::shared_ptr<Buffer> whole;  // the borrow holds its allocation (and so the mapping) from here
  if (rig_status s = buffer_wrap(host, base, length, RIG_ACCESS_READ, unmap_kept, mapping, &whole)) {
    unmap_kept(mapping);  // a callback is never called when the call that would call it fails
    return fail(s, "keep registered: wrapping the mapping: %s", last_error());
  }
  if (rig_status s = buffer_borrow(device, *whole, out))
    return fail(s, "keep registered: registering %s (%zu bytes) on %s: %s", shard.path.c_str(), length, name.c_str(),
                last_error());
  // A driver that read the pages as it registered them (a double of one) read zeros where the file is short.
  if (rig_status s = kept_fault(shard, base)) {
    out->reset();
    return s;
  }
  *base_out = base;
  return RIG_OK;
}

}  // namespace

std::shared_ptr<Buffer> File::kept_on(const Device &device, size_t shard) {
  const std::string &name = device.info().name;
  std::lock_guard lock(kept_mutex_);
  for (const Kept &k : kept_)
    if (k.device == name && shard < k.borrowed.size()) return k.borrowed[shard];
  return nullptr;
}

rig_status File::keep_on(Device &device, Device &host) {
  const std::string &name = device.info().name;
  std::lock_guard lock(kept_mutex_);
  for (const Kept &k : kept_)
    if (k.device == name) return RIG_OK;
  Kept k{name, {}, {}};
  for (const auto &shard : shards) {
    k.borrowed.emplace_back();
    k.bases.push_back(nullptr);
    if (rig_status s = keep_shard(*shard, device, host, &k.borrowed.back(), &k.bases.back())) return s;
  }
  kept_.push_back(std::move(k));
  return RIG_OK;
}

rig_status File::kept_intact(const Device &device) {
  const std::string &name = device.info().name;
  std::lock_guard lock(kept_mutex_);
  for (const Kept &k : kept_)
    if (k.device == name)
      for (size_t i = 0; i < k.bases.size() && i < shards.size(); ++i)
        if (rig_status s = kept_fault(*shards[i], k.bases[i])) return s;
  return RIG_OK;
}

rig_status Shard::unchanged() const {
  struct stat st;
  if (fstat(fd, &st) != 0) return fail(RIG_DRIVER, "fstat %s: %s", path.c_str(), strerror(errno));
  if (uint64_t(st.st_size) != size)
    return fail(RIG_INVALID_ARGUMENT, "the file %s changed during the load: size %llu, was %llu", path.c_str(),
                (unsigned long long)st.st_size, (unsigned long long)size);
  if (st.st_mtim.tv_sec != mtime.tv_sec || st.st_mtim.tv_nsec != mtime.tv_nsec)
    return fail(RIG_INVALID_ARGUMENT, "the file %s changed during the load (its mtime moved)", path.c_str());
  return RIG_OK;
}

rig_status File::unchanged() const {
  for (const auto &shard : shards)
    if (rig_status s = shard->unchanged()) return s;
  return RIG_OK;
}

const Shard &File::shard_at(uint64_t at) const {
  auto it = std::upper_bound(shards.begin(), shards.end(), at, [](uint64_t v, const auto &s) { return v < s->base; });
  return **(it == shards.begin() ? it : it - 1);
}

rig_status File::read(uint64_t at, void *dst, size_t length) const {
  const Shard &shard = shard_at(at);
  if (rig_status s = read_fully(shard.fd, at - shard.base, dst, length))
    return fail(s, "%s: %s", shard.path.c_str(), last_error());
  return RIG_OK;
}

rig_status read_fully(int fd, uint64_t offset, void *dst, size_t length, size_t *got) {
  size_t done = 0;
  while (done < length) {
    ssize_t n = pread(fd, static_cast<char *>(dst) + done, length - done, off_t(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(RIG_DRIVER, "reading the file at offset %llu: %s", (unsigned long long)(offset + done), strerror(errno));
    if (n == 0) break;
    done += size_t(n);
  }
  if (got) { *got = done; return RIG_OK; }
  if (done < length)
    return fail(RIG_INVALID_ARGUMENT, "the file ended at offset %llu, before %llu (it shrank?)",
                (unsigned long long)(offset + done), (unsigned long long)(offset + length));
  return RIG_OK;
}

namespace {

rig_status open_fd(const char *path, std::unique_ptr<Shard> *out) {
  auto f = std::make_unique<Shard>();
  struct stat st;
  if (rig_status s = open_regular_file(path, &f->fd, &st)) return s;
  f->path = path;
  f->size = uint64_t(st.st_size);
  f->mtime = st.st_mtim;
  f->file_system = uint64_t(st.st_dev);
  *out = std::move(f);
  return RIG_OK;
}

}  // namespace

rig_status open_shard(const std::string &path, rig_load_format format, std::unique_ptr<Shard> *out,
                      ParseResult *parsed, rig_load_format *found) {
  std::unique_ptr<Shard> f;
  if (rig_status s = open_fd(path.c_str(), &f)) return s;
  if (format == RIG_LOAD_FORMAT_AUTO) {
    char magic[4] = {};
    size_t got = 0;
    if (rig_status s = read_fully(f->fd, 0, magic, 4, &got)) return s;
    format = got == 4 && std::memcmp(magic, "GGUF", 4) == 0 ? RIG_LOAD_FORMAT_GGUF : RIG_LOAD_FORMAT_SAFETENSORS;
  }
  if (format != RIG_LOAD_FORMAT_SAFETENSORS && format != RIG_LOAD_FORMAT_GGUF)
    return fail(RIG_INVALID_ARGUMENT, "format %d is not one rig_load_open reads (raw ranges: rig_load_open_raw)", int(format));
  std::vector<uint8_t> head;
  // 64 KiB holds the header of most files (a safetensors header of 1000 tensors is about 100 KiB); the
  // parser asks for more when it needs it. Why not 1 MiB at once: the read and the zeroed buffer's page
  // faults are paid inside every load's timing.
  uint64_t want = std::min<uint64_t>(f->size, uint64_t(64) << 10);
  for (;;) {
    head.resize(want);
    if (rig_status s = read_fully(f->fd, 0, head.data(), want)) return s;
    ParseResult r = format == RIG_LOAD_FORMAT_GGUF ? parse_gguf(head.data(), head.size(), f->size)
                                                   : parse_safetensors(head.data(), head.size(), f->size);
    if (r.status != RIG_OK) return fail(r.status, "%s: %s", path.c_str(), r.message.c_str());
    if (r.need_bytes > want) { want = r.need_bytes; continue; }
    if (r.need_bytes) return fail(RIG_INVALID_ARGUMENT, "%s: the header parser made no progress", path.c_str());
    *parsed = std::move(r);
    break;
  }
  *found = format;
  *out = std::move(f);
  return RIG_OK;
}

rig_status open_raw(const char *path, const rig_load_range *ranges, size_t count, std::shared_ptr<File> *out) {
  if (count && !ranges) return fail(RIG_INVALID_ARGUMENT, "ranges is null");
  auto f = std::make_shared<File>();
  f->shards.emplace_back();
  if (rig_status s = open_fd(path, &f->shards[0])) return s;
  f->path = path;
  f->format = RIG_LOAD_FORMAT_RAW;
  ParseResult r;
  for (size_t i = 0; i < count; ++i) {
    if (!ranges[i].name) return fail(RIG_INVALID_ARGUMENT, "range %zu has no name", i);
    TensorEntry t;
    t.name = ranges[i].name;
    t.dtype_name = "U8";
    t.shape = {ranges[i].length};
    t.offset = ranges[i].offset;
    t.length = ranges[i].length;
    r.tensors.push_back(std::move(t));
  }
  check_table(r, f->shards[0]->size);
  if (r.status != RIG_OK) return fail(r.status, "%s: %s", path, r.message.c_str());
  f->tensors = std::move(r.tensors);
  *out = std::move(f);
  return RIG_OK;
}

}  // namespace rig::load
