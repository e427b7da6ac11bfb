// The C face of rig_load.h: translation only (handles, option sizes, exceptions); the loader is src/load.
// Loader handles are pointers checked against a live set, so a released or forged one answers
// RIG_INVALID_HANDLE instead of being followed.
#include <rig_load.h>

#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <unordered_set>

#include "capi/api.h"
#include "core/error.h"
#include "load/file.h"
#include "load/load.h"
#include "load/path.h"
#include "load/pool.h"

namespace {

using rig::fail;
using rig::capi::entry;  // the C entry wrapper every rig_* function uses: no exception crosses the ABI
using namespace rig::load;

struct FileHandle {
  std::shared_ptr<File> file;
};

std::mutex live_mutex;
std::unordered_set<const void *> &live() {
  static std::unordered_set<const void *> set;
  return set;
}
void add_live(const void *p) {
  std::lock_guard lock(live_mutex);
  live().insert(p);
}
bool is_live(const void *p) {
  std::lock_guard lock(live_mutex);
  return p && live().count(p);
}
bool take_live(const void *p) {
  std::lock_guard lock(live_mutex);
  return p && live().erase(p);
}

FileHandle *file_of(rig_load_file f) {
  return is_live(f) ? reinterpret_cast<FileHandle *>(f) : nullptr;
}
Load *load_of(rig_load l) { return is_live(l) ? reinterpret_cast<Load *>(l) : nullptr; }

// A struct the caller sized: copies min(size, ours) bytes over zeroes, so older callers keep working.
template <class T>
rig_status sized(const T *in, T *out, const char *what) {
  std::memset(static_cast<void *>(out), 0, sizeof(T));
  if (!in) return RIG_OK;
  if (in->size < sizeof(size_t)) return fail(RIG_INVALID_ARGUMENT, "%s: size is not set", what);
  std::memcpy(static_cast<void *>(out), in, std::min(in->size, sizeof(T)));
  out->size = sizeof(T);
  return RIG_OK;
}

rig_status give_file(std::shared_ptr<File> file, rig_load_file *out) {
  auto *h = new FileHandle{std::move(file)};
  add_live(h);
  *out = reinterpret_cast<rig_load_file>(h);
  return RIG_OK;
}

}  // namespace

extern "C" {

RIG_API rig_status rig_load_open(const char *path, rig_load_format format, rig_load_file *out) {
  return entry("rig_load_open", [&] {
    if (!out) return fail(RIG_INVALID_ARGUMENT, "rig_load_open: out is null");
    std::shared_ptr<File> f;
    if (rig_status s = open_file(path, format, &f)) return s;
    return give_file(std::move(f), out);
  });
}

RIG_API rig_status rig_load_open_raw(const char *path, const rig_load_range *ranges, size_t count, rig_load_file *out) {
  return entry("rig_load_open_raw", [&] {
    if (!out) return fail(RIG_INVALID_ARGUMENT, "rig_load_open_raw: out is null");
    std::shared_ptr<File> f;
    if (rig_status s = open_raw(path, ranges, count, &f)) return s;
    return give_file(std::move(f), out);
  });
}

RIG_API rig_status rig_load_tensor_count(rig_load_file file, size_t *count) {
  return entry("rig_load_tensor_count", [&] {
    FileHandle *h = file_of(file);
    if (!h) return fail(RIG_INVALID_HANDLE, "rig_load_tensor_count: not a live file handle");
    if (!count) return fail(RIG_INVALID_ARGUMENT, "rig_load_tensor_count: count is null");
    *count = h->file->tensors.size();
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_tensor_get(rig_load_file file, size_t index, rig_load_tensor *info) {
  return entry("rig_load_tensor_get", [&] {
    FileHandle *h = file_of(file);
    if (!h) return fail(RIG_INVALID_HANDLE, "rig_load_tensor_get: not a live file handle");
    if (!info || info->size < sizeof(rig_load_tensor))
      return fail(RIG_INVALID_ARGUMENT, "rig_load_tensor_get: info is null or its size is not set");
    if (index >= h->file->tensors.size())
      return fail(RIG_INVALID_ARGUMENT, "rig_load_tensor_get: index %zu, the file has %zu tensors", index, h->file->tensors.size());
    const TensorEntry &t = h->file->tensors[index];
    rig_load_tensor r{};
    r.size = sizeof r;
    r.name = t.name.c_str();
    r.dtype_name = t.dtype_name.c_str();
    r.dtype = t.dtype;
    r.ggml_type = t.ggml_type;
    r.rank = uint32_t(t.shape.size());
    for (size_t i = 0; i < t.shape.size() && i < RIG_LOAD_MAX_DIMS; ++i) r.shape[i] = t.shape[i];
    r.offset = t.offset;
    r.length = t.length;
    *info = r;
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_find(rig_load_file file, const char *name, size_t *index) {
  return entry("rig_load_find", [&] {
    FileHandle *h = file_of(file);
    if (!h) return fail(RIG_INVALID_HANDLE, "rig_load_find: not a live file handle");
    if (!name || !index) return fail(RIG_INVALID_ARGUMENT, "rig_load_find: name or index is null");
    for (size_t i = 0; i < h->file->tensors.size(); ++i)
      if (h->file->tensors[i].name == name) {
        *index = i;
        return RIG_OK;
      }
    return fail(RIG_NOT_FOUND, "rig_load_find: no tensor called '%s'", name);
  });
}

RIG_API rig_status rig_load_file_format(rig_load_file file, rig_load_format *format) {
  return entry("rig_load_file_format", [&] {
    FileHandle *h = file_of(file);
    if (!h) return fail(RIG_INVALID_HANDLE, "rig_load_file_format: not a live file handle");
    if (!format) return fail(RIG_INVALID_ARGUMENT, "rig_load_file_format: format is null");
    *format = h->file->format;
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_file_keep_registered(rig_load_file file, rig_device device) {
  return entry("rig_load_file_keep_registered", [&] {
    FileHandle *h = file_of(file);
    if (!h) return fail(RIG_INVALID_HANDLE, "rig_load_file_keep_registered: not a live file handle");
    if (!device) return fail(RIG_INVALID_HANDLE, "rig_load_file_keep_registered: device is null");
    Allowed a;
    if (rig_status s = allowed_on(device, *h->file, true, &a)) return s;
    if (!a.registered)
      return fail(RIG_UNSUPPORTED, "rig_load_file_keep_registered: the device's verdict is not Usable: %s",
                  a.verdict.c_str());
    return h->file->keep_on(device);
  });
}

RIG_API rig_status rig_load_file_release(rig_load_file file) {
  return entry("rig_load_file_release", [&] {
    if (!take_live(file)) return fail(RIG_INVALID_HANDLE, "rig_load_file_release: not a live file handle");
    delete reinterpret_cast<FileHandle *>(file);
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_pool_create(rig_device device, size_t bytes, size_t chunk_bytes, rig_load_pool *out) {
  return entry("rig_load_pool_create", [&] {
    if (!out) return fail(RIG_INVALID_ARGUMENT, "rig_load_pool_create: out is null");
    size_t chunk = chunk_bytes ? (chunk_bytes + 65535) / 65536 * 65536 : size_t(8) << 20;
    if (bytes < chunk) return fail(RIG_INVALID_ARGUMENT, "rig_load_pool_create: %zu bytes hold no chunk of %zu", bytes, chunk);
    std::unique_ptr<StagingPool> pool;
    if (rig_status s = StagingPool::make(device, chunk, bytes / chunk, &pool)) return s;
    StagingPool *p = pool.release();
    add_live(p);
    *out = reinterpret_cast<rig_load_pool>(p);
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_pool_release(rig_load_pool pool) {
  return entry("rig_load_pool_release", [&] {
    auto *p = reinterpret_cast<StagingPool *>(pool);
    if (!is_live(p)) return fail(RIG_INVALID_HANDLE, "rig_load_pool_release: not a live pool");
    if (p->claimed()) return fail(RIG_BUSY, "rig_load_pool_release: a load uses the pool");
    take_live(p);
    delete p;
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_start(rig_load_file file, const size_t *tensors, size_t tensor_count,
                                  const rig_load_placement *placement, const rig_load_options *options, rig_load *out) {
  return entry("rig_load_start", [&] {
    FileHandle *h = file_of(file);
    if (!h) return fail(RIG_INVALID_HANDLE, "rig_load_start: not a live file handle");
    if (!placement || !out) return fail(RIG_INVALID_ARGUMENT, "rig_load_start: placement or out is null");
    rig_load_placement p;
    rig_load_options o;
    if (rig_status s = sized(placement, &p, "placement")) return s;
    if (rig_status s = sized(options, &o, "options")) return s;
    for (size_t i = 0; i < o.pool_count && o.pools; ++i)
      if (!is_live(o.pools[i])) return fail(RIG_INVALID_HANDLE, "rig_load_start: pool %zu is not a live pool", i);
    std::unique_ptr<Load> load;
    if (rig_status s = Load::start(h->file, tensors, tensor_count, p, o, &load)) return s;
    Load *l = load.release();
    add_live(l);
    *out = reinterpret_cast<rig_load>(l);
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_buffer(rig_load load, size_t index, size_t device, rig_buffer *out) {
  return entry("rig_load_buffer", [&] {
    Load *l = load_of(load);
    if (!l) return fail(RIG_INVALID_HANDLE, "rig_load_buffer: not a live load");
    if (!out) return fail(RIG_INVALID_ARGUMENT, "rig_load_buffer: out is null");
    return l->buffer(index, device, out);
  });
}

RIG_API rig_status rig_load_wait(rig_load load) {
  return entry("rig_load_wait", [&] {
    Load *l = load_of(load);
    if (!l) return fail(RIG_INVALID_HANDLE, "rig_load_wait: not a live load");
    return l->wait();
  });
}

RIG_API rig_status rig_load_get_stats(rig_load load, rig_load_stats *stats) {
  return entry("rig_load_get_stats", [&] {
    Load *l = load_of(load);
    if (!l) return fail(RIG_INVALID_HANDLE, "rig_load_get_stats: not a live load");
    if (!stats || stats->size < sizeof(rig_load_stats))
      return fail(RIG_INVALID_ARGUMENT, "rig_load_get_stats: stats is null or its size is not set");
    return l->stats(stats);
  });
}

RIG_API rig_status rig_load_release(rig_load load) {
  return entry("rig_load_release", [&] {
    if (!take_live(load)) return fail(RIG_INVALID_HANDLE, "rig_load_release: not a live load");
    delete reinterpret_cast<Load *>(load);
    return RIG_OK;
  });
}

RIG_API const char *rig_load_path_name(rig_load_path path) {
  switch (path) {
    case RIG_LOAD_PATH_AUTO: return "auto";
    case RIG_LOAD_PATH_STAGED: return "staged";
    case RIG_LOAD_PATH_REGISTERED: return "registered";
    case RIG_LOAD_PATH_DIRECT: return "direct";
    default: return "unknown";
  }
}

}  // extern "C"
