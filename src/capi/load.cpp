// The C face of rig_load.h: translation only (handles, option sizes, exceptions); the loader is src/load,
// which speaks core. Handles are resolved here into core's objects (devices, the caller's pools) before a
// call goes down, and minted here for what comes back (rig_load_buffer's buffer), as every face does.
// Loader handles are the C face's generation-checked handles (capi/handles.h) of their own kinds, so a
// released, stale or forged one answers RIG_INVALID_HANDLE, and a handle in use by one thread is never
// freed under it by another's release.
#include <cstddef>
#include <rig_load.h>

#include <cstring>
#include <memory>
#include <vector>

#include "capi/api.h"
#include "capi/handles.h"
#include "capi/sized.h"
#include "core/buffer.h"
#include "core/driver_memory.h"
#include "core/error.h"
#include "core/registry.h"
#include "load/checkpoint.h"
#include "load/file.h"
#include "load/load.h"
#include "load/path.h"
#include "load/pool.h"

namespace {

using rig::fail;
using rig::capi::entry;  // the C entry wrapper every rig_* function uses: no exception crosses the ABI
using rig::capi::give;
using rig::capi::Kind;
using rig::capi::Pinned;
using rig::capi::pin_device;
using rig::capi::read_sized;
using rig::capi::write_sized;
using rig::capi::word_of;
using namespace rig::load;

using PinnedFile = Pinned<File>;

// The placement's devices as the engine holds them (devices live until the process exits, so the load
// keeps them past this call's pins): 1 to 64, each a live handle.
rig_status placement_devices(const rig_load_placement &p, std::vector<rig::Device *> *out) {
  if (p.device_count == 0 || p.device_count > 64 || !p.devices)
    return fail(RIG_INVALID_ARGUMENT, "the placement names %zu devices (1..64)", p.device_count);
  for (size_t i = 0; i < p.device_count; ++i) {
    auto d = pin_device(p.devices[i], "load_start: placement device");
    if (!d) return fail(RIG_INVALID_HANDLE, "placement device %zu: %s", i, rig::last_error());
    out->push_back(d.get());
  }
  return RIG_OK;
}

rig_status give_file(std::shared_ptr<File> file, rig_load_file *out) {
  return give(Kind::load_file, std::move(file), out);
}

}  // namespace

extern "C" {

RIG_API rig_status rig_load_open(const char *path, rig_load_format format, rig_load_file *out) {
  return entry("load_open", [&] {
    if (!out) return fail(RIG_INVALID_ARGUMENT, "load_open: out is null");
    std::shared_ptr<File> f;
    if (rig_status s = open_checkpoint(path, format, &f)) return s;
    return give_file(std::move(f), out);
  });
}

RIG_API rig_status rig_load_open_raw(const char *path, const rig_load_range *ranges, size_t count, rig_load_file *out) {
  return entry("load_open_raw", [&] {
    if (!out) return fail(RIG_INVALID_ARGUMENT, "load_open_raw: out is null");
    std::shared_ptr<File> f;
    if (rig_status s = open_raw(path, ranges, count, &f)) return s;
    return give_file(std::move(f), out);
  });
}

RIG_API rig_status rig_load_tensor_count(rig_load_file file, size_t *count) {
  return entry("load_tensor_count", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_tensor_count");
    if (!h) return RIG_INVALID_HANDLE;
    if (!count) return fail(RIG_INVALID_ARGUMENT, "load_tensor_count: count is null");
    *count = h->tensors.size();
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_tensor_get(rig_load_file file, size_t index, rig_load_tensor *info) {
  return entry("load_tensor_get", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_tensor_get");
    if (!h) return RIG_INVALID_HANDLE;
    if (!info) return fail(RIG_INVALID_ARGUMENT, "load_tensor_get: info is null");
    // A caller built before `shard` was appended passes the smaller size: it gets the fields it has.
    if (info->size < offsetof(rig_load_tensor, shard))
      return fail(RIG_INVALID_ARGUMENT, "load_tensor_get: info->size is %zu, below %zu: set it to the struct's sizeof",
                  info->size, offsetof(rig_load_tensor, shard));
    if (index >= h->tensors.size())
      return fail(RIG_INVALID_ARGUMENT, "load_tensor_get: index %zu, the file has %zu tensors", index, h->tensors.size());
    const TensorEntry &t = h->tensors[index];
    rig_load_tensor r{};
    r.size = sizeof r;
    r.name = t.name.c_str();
    r.dtype_name = t.dtype_name.c_str();
    r.dtype = t.dtype;
    r.ggml_type = t.ggml_type;
    r.rank = uint32_t(t.shape.size());
    for (size_t i = 0; i < t.shape.size() && i < RIG_LOAD_MAX_DIMS; ++i) r.shape[i] = t.shape[i];
    r.offset = t.offset - h->shards[t.shard]->base;  // in its own file, not the load's stream
    r.length = t.length;
    r.shard = t.shard;
    return write_sized(r, "load_tensor_get", "info", info);
  });
}

RIG_API rig_status rig_load_find(rig_load_file file, const char *name, size_t *index) {
  return entry("load_find", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_find");
    if (!h) return RIG_INVALID_HANDLE;
    if (!name || !index) return fail(RIG_INVALID_ARGUMENT, "load_find: name or index is null");
    for (size_t i = 0; i < h->tensors.size(); ++i)
      if (h->tensors[i].name == name) {
        *index = i;
        return RIG_OK;
      }
    return fail(RIG_NOT_FOUND, "load_find: no tensor called '%s'", name);
  });
}

RIG_API rig_status rig_load_file_format(rig_load_file file, rig_load_format *format) {
  return entry("load_file_format", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_file_format");
    if (!h) return RIG_INVALID_HANDLE;
    if (!format) return fail(RIG_INVALID_ARGUMENT, "load_file_format: format is null");
    *format = h->format;
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_shard_count(rig_load_file file, size_t *count) {
  return entry("load_shard_count", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_shard_count");
    if (!h) return RIG_INVALID_HANDLE;
    if (!count) return fail(RIG_INVALID_ARGUMENT, "load_shard_count: count is null");
    *count = h->shards.size();
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_shard_get(rig_load_file file, size_t index, const char **path, uint64_t *bytes) {
  return entry("load_shard_get", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_shard_get");
    if (!h) return RIG_INVALID_HANDLE;
    if (index >= h->shards.size())
      return fail(RIG_INVALID_ARGUMENT, "load_shard_get: index %zu, the checkpoint has %zu files", index, h->shards.size());
    if (path) *path = h->shards[index]->path.c_str();
    if (bytes) *bytes = h->shards[index]->size;
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_metadata_count(rig_load_file file, size_t *count) {
  return entry("load_metadata_count", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_metadata_count");
    if (!h) return RIG_INVALID_HANDLE;
    if (!count) return fail(RIG_INVALID_ARGUMENT, "load_metadata_count: count is null");
    *count = h->metadata.size();
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_metadata_get(rig_load_file file, size_t index, const char **key, const char **value) {
  return entry("load_metadata_get", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_metadata_get");
    if (!h) return RIG_INVALID_HANDLE;
    if (index >= h->metadata.size())
      return fail(RIG_INVALID_ARGUMENT, "load_metadata_get: index %zu, the file has %zu entries", index, h->metadata.size());
    if (key) *key = h->metadata[index].first.c_str();
    if (value) *value = h->metadata[index].second.c_str();
    return RIG_OK;
  });
}

RIG_API rig_status rig_load_file_keep_registered(rig_load_file file, rig_device device) {
  return entry("load_file_keep_registered", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_file_keep_registered");
    if (!h) return RIG_INVALID_HANDLE;
    if (!device) return fail(RIG_INVALID_HANDLE, "load_file_keep_registered: device is null");
    auto d = pin_device(device, "load_file_keep_registered");
    if (!d) return RIG_INVALID_HANDLE;
    Allowed a;
    if (rig_status s = allowed_on(*d, *h, true, &a)) return s;
    if (!a.registered)
      return fail(RIG_UNSUPPORTED, "load_file_keep_registered: the device's verdict is not Usable: %s",
                  a.verdict.c_str());
    return h->keep_on(*d, rig::host_device());
  });
}

RIG_API rig_status rig_load_file_release(rig_load_file file) {
  return entry("load_file_release", [&] {
    return rig::capi::remove(word_of(file), Kind::load_file, "load_file_release");
  });
}

RIG_API rig_status rig_load_pool_create(rig_device device, size_t bytes, size_t chunk_bytes, rig_load_pool *out) {
  return entry("load_pool_create", [&] {
    if (!out) return fail(RIG_INVALID_ARGUMENT, "load_pool_create: out is null");
    size_t chunk = chunk_bytes ? (chunk_bytes + 65535) / 65536 * 65536 : RIG_LOAD_DEFAULT_CHUNK_BYTES;
    if (bytes < chunk) return fail(RIG_INVALID_ARGUMENT, "load_pool_create: %zu bytes hold no chunk of %zu", bytes, chunk);
    auto d = pin_device(device, "load_pool_create");
    if (!d) return RIG_INVALID_HANDLE;
    std::unique_ptr<StagingPool> pool;
    // Grown behind, as a load's own pool is: a first load through it starts reading after one piece
    // (rig_load.h); made whole first, the pinning was a sixth of a fresh process's 4 GiB load (bench/README.md).
    if (rig_status s = StagingPool::make(*d, rig::host_device(), chunk, bytes / chunk, &pool)) return s;
    return give(Kind::load_pool, std::shared_ptr<StagingPool>(std::move(pool)), out);
  });
}

RIG_API rig_status rig_load_pool_release(rig_load_pool pool) {
  return entry("load_pool_release", [&] {
    {
      Pinned<StagingPool> p(word_of(pool), Kind::load_pool, "load_pool_release");
      if (!p) return RIG_INVALID_HANDLE;
      if (p->claimed()) return fail(RIG_BUSY, "load_pool_release: a load uses the pool");
    }
    // a load that claims it meanwhile holds its own reference: the pool goes when that load ends
    return rig::capi::remove(word_of(pool), Kind::load_pool, "load_pool_release");
  });
}

RIG_API rig_status rig_load_start(rig_load_file file, const size_t *tensors, size_t tensor_count,
                                  const rig_load_placement *placement, const rig_load_options *options, rig_load *out) {
  return entry("load_start", [&] {
    PinnedFile h(word_of(file), Kind::load_file, "load_start");
    if (!h) return RIG_INVALID_HANDLE;
    if (!placement || !out) return fail(RIG_INVALID_ARGUMENT, "load_start: placement or out is null");
    rig_load_placement p;
    rig_load_options o{};  // null options: every field its default
    // the first version ended at masks; a caller built before the slices slices nothing
    if (rig_status s = read_sized(*placement, offsetof(rig_load_placement, splits), "load_start", "placement", &p))
      return s;
    // the first version ended at pool_count; a caller built before arena_bytes gets its default
    if (options)
      if (rig_status s = read_sized(*options, offsetof(rig_load_options, arena_bytes), "load_start", "options", &o))
        return s;
    if (o.pool_count && !o.pools) return fail(RIG_INVALID_ARGUMENT, "load_start: pool_count without pools");
    std::vector<rig::Device *> devices;
    if (rig_status s = placement_devices(p, &devices)) return s;
    std::vector<std::shared_ptr<StagingPool>> pools;
    for (size_t i = 0; i < o.pool_count; ++i) {
      Pinned<StagingPool> pool(word_of(o.pools[i]), Kind::load_pool, "load_start: options.pools");
      if (!pool) return RIG_INVALID_HANDLE;
      pools.push_back(pool.share());
    }
    std::unique_ptr<Load> load;
    if (rig_status s = Load::start(rig::host_device(), h.share(), tensors, tensor_count, std::move(devices), p, o,
                                   std::move(pools), &load))
      return s;
    return give(Kind::load, std::shared_ptr<Load>(std::move(load)), out);
  });
}

RIG_API rig_status rig_load_buffer(rig_load load, size_t index, size_t device, rig_buffer *out) {
  return entry("load_buffer", [&] {
    Pinned<Load> l(word_of(load), Kind::load, "load_buffer");
    if (!l) return RIG_INVALID_HANDLE;
    if (!out) return fail(RIG_INVALID_ARGUMENT, "load_buffer: out is null");
    std::shared_ptr<rig::Buffer> b;
    if (rig_status s = l->buffer(index, device, &b)) return s;
    return give(Kind::buffer, std::move(b), out);
  });
}

RIG_API rig_status rig_load_slice_get(rig_load load, size_t index, size_t device, rig_load_slice *out) {
  return entry("load_slice_get", [&] {
    Pinned<Load> l(word_of(load), Kind::load, "load_slice_get");
    if (!l) return RIG_INVALID_HANDLE;
    if (!out) return fail(RIG_INVALID_ARGUMENT, "load_slice_get: out is null");
    return l->slice(index, device, out);
  });
}

RIG_API rig_status rig_load_wait(rig_load load) {
  return entry("load_wait", [&] {
    Pinned<Load> l(word_of(load), Kind::load, "load_wait");
    if (!l) return RIG_INVALID_HANDLE;
    return l->wait();
  });
}

RIG_API rig_status rig_load_get_stats(rig_load load, rig_load_stats *stats) {
  return entry("load_get_stats", [&] {
    Pinned<Load> l(word_of(load), Kind::load, "load_get_stats");
    if (!l) return RIG_INVALID_HANDLE;
    // A caller compiled before the phases were appended passes the shorter size: it gets what it knows.
    if (!stats) return fail(RIG_INVALID_ARGUMENT, "load_get_stats: stats is null");
    if (stats->size < offsetof(rig_load_stats, read_seconds))
      return fail(RIG_INVALID_ARGUMENT, "load_get_stats: stats->size is %zu, below %zu: set it to the struct's sizeof",
                  stats->size, offsetof(rig_load_stats, read_seconds));
    rig_load_stats ours{};
    if (rig_status s = l->stats(&ours)) return s;
    return write_sized(ours, "load_get_stats", "stats", stats);
  });
}

RIG_API rig_status rig_load_release(rig_load load) {
  return entry("load_release", [&] {
    {
      // cancelled first, so that calls waiting on it (rig_load_wait, rig_load_buffer) return and unpin
      Pinned<Load> l(word_of(load), Kind::load, "load_release");
      if (!l) return RIG_INVALID_HANDLE;
      l->cancel();
    }
    return rig::capi::remove(word_of(load), Kind::load, "load_release");
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
