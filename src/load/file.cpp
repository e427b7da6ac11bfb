// Opening a weights file: read the header with pread (doubling the read until the parser has what it
// needs, within the format's limit), parse it, check it against the file.
#include "load/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace rig::load {

File::~File() {
  if (fd >= 0) ::close(fd);
}

rig_status File::unchanged() const {
  struct stat st;
  if (fstat(fd, &st) != 0) return fail(RIG_DRIVER, "fstat %s: %s", path.c_str(), strerror(errno));
  if (uint64_t(st.st_size) != size)
    return fail(RIG_INVALID_ARGUMENT, "the file %s changed during the load: size %llu, was %llu", path.c_str(),
                (unsigned long long)st.st_size, (unsigned long long)size);
  if (st.st_mtim.tv_sec != mtime.tv_sec || st.st_mtim.tv_nsec != mtime.tv_nsec)
    return fail(RIG_INVALID_ARGUMENT, "the file %s changed during the load (its mtime moved)", path.c_str());
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

rig_status open_fd(const char *path, std::shared_ptr<File> *out) {
  if (!path || !*path) return fail(RIG_INVALID_ARGUMENT, "no path");
  auto f = std::make_shared<File>();
  f->path = path;
  f->fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (f->fd < 0) return fail(errno == ENOENT ? RIG_NOT_FOUND : RIG_INVALID_ARGUMENT, "open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(f->fd, &st) != 0) return fail(RIG_DRIVER, "fstat %s: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(RIG_INVALID_ARGUMENT, "%s is not a regular file", path);
  f->size = uint64_t(st.st_size);
  f->mtime = st.st_mtim;
  f->file_system = uint64_t(st.st_dev);
  *out = std::move(f);
  return RIG_OK;
}

}  // namespace

rig_status open_file(const char *path, rig_load_format format, std::shared_ptr<File> *out) {
  std::shared_ptr<File> f;
  if (rig_status s = open_fd(path, &f)) return s;
  if (format == RIG_LOAD_FORMAT_AUTO) {
    char magic[4] = {};
    size_t got = 0;
    if (rig_status s = read_fully(f->fd, 0, magic, 4, &got)) return s;
    format = got == 4 && std::memcmp(magic, "GGUF", 4) == 0 ? RIG_LOAD_FORMAT_GGUF : RIG_LOAD_FORMAT_SAFETENSORS;
  }
  if (format != RIG_LOAD_FORMAT_SAFETENSORS && format != RIG_LOAD_FORMAT_GGUF)
    return fail(RIG_INVALID_ARGUMENT, "format %d is not one rig_load_open reads (raw ranges: rig_load_open_raw)", int(format));
  f->format = format;
  std::vector<uint8_t> head;
  uint64_t want = std::min<uint64_t>(f->size, uint64_t(1) << 20);
  for (;;) {
    head.resize(want);
    if (rig_status s = read_fully(f->fd, 0, head.data(), want)) return s;
    ParseResult r = format == RIG_LOAD_FORMAT_GGUF ? parse_gguf(head.data(), head.size(), f->size)
                                                   : parse_safetensors(head.data(), head.size(), f->size);
    if (r.status != RIG_OK) return fail(r.status, "%s: %s", path, r.message.c_str());
    if (r.need_bytes > want) { want = r.need_bytes; continue; }
    if (r.need_bytes) return fail(RIG_INVALID_ARGUMENT, "%s: the header parser made no progress", path);
    f->tensors = std::move(r.tensors);
    break;
  }
  *out = std::move(f);
  return RIG_OK;
}

rig_status open_raw(const char *path, const rig_load_range *ranges, size_t count, std::shared_ptr<File> *out) {
  if (count && !ranges) return fail(RIG_INVALID_ARGUMENT, "ranges is null");
  std::shared_ptr<File> f;
  if (rig_status s = open_fd(path, &f)) return s;
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
  check_table(r, f->size);
  if (r.status != RIG_OK) return fail(r.status, "%s: %s", path, r.message.c_str());
  f->tensors = std::move(r.tensors);
  *out = std::move(f);
  return RIG_OK;
}

}  // namespace rig::load
