// The C face of rig_keep.h: translation only (handles, option sizes, exceptions); the keeper and the
// attaching side are src/keep, which speaks core. Keepers and attachments are the face's generation-checked
// handles of their own kinds, as every face's.
#include <rig_keep.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "capi/api.h"
#include "capi/handles.h"
#include "capi/sized.h"
#include "core/error.h"
#include "keep/attachment.h"
#include "keep/keeper.h"

namespace {

using rig::fail;
using rig::capi::entry;
using rig::capi::give;
using rig::capi::Kind;
using rig::capi::Pinned;
using rig::capi::pin_device;
using rig::capi::read_sized;
using rig::capi::word_of;
using rig::capi::write_sized;
using rig::keep::Attachment;
using rig::keep::Keeper;

}  // namespace

extern "C" {

RIG_API rig_status rig_keep_start(const char *checkpoint, const rig_device *devices, size_t device_count,
                                  const char *socket_path, const rig_keep_options *options, rig_keeper *out) {
  return entry("keep_start", [&] {
    if (!checkpoint || !socket_path || !out)
      return fail(RIG_INVALID_ARGUMENT, "keep_start: checkpoint, socket_path or out is null");
    if (!devices || device_count == 0 || device_count > 64)
      return fail(RIG_INVALID_ARGUMENT, "keep_start: %zu devices (1..64)", device_count);
    rig_keep_options o{};
    if (options)
      if (rig_status s = read_sized(*options, sizeof(rig_keep_options), "keep_start", "options", &o)) return s;
    std::vector<rig::Device *> ds;
    for (size_t i = 0; i < device_count; ++i) {
      auto d = pin_device(devices[i], "keep_start: device");
      if (!d) return RIG_INVALID_HANDLE;
      for (rig::Device *seen : ds)
        if (seen == d.get()) return fail(RIG_INVALID_ARGUMENT, "keep_start: device %zu is named twice", i);
      ds.push_back(d.get());  // devices live until the process exits (core/registry.h)
    }
    std::unique_ptr<Keeper> k;
    if (rig_status s = Keeper::start(checkpoint, std::move(ds), socket_path, o, &k)) return s;
    return give(Kind::keeper, std::shared_ptr<Keeper>(std::move(k)), out);
  });
}

RIG_API rig_status rig_keep_wait_loaded(rig_keeper keeper) {
  return entry("keep_wait_loaded", [&] {
    Pinned<Keeper> k(word_of(keeper), Kind::keeper, "keep_wait_loaded");
    if (!k) return RIG_INVALID_HANDLE;
    return k->wait_loaded();
  });
}

RIG_API rig_status rig_keep_reload(rig_keeper keeper) {
  return entry("keep_reload", [&] {
    Pinned<Keeper> k(word_of(keeper), Kind::keeper, "keep_reload");
    if (!k) return RIG_INVALID_HANDLE;
    return k->reload();
  });
}

RIG_API rig_status rig_keep_client_count(rig_keeper keeper, size_t *count) {
  return entry("keep_client_count", [&] {
    Pinned<Keeper> k(word_of(keeper), Kind::keeper, "keep_client_count");
    if (!k) return RIG_INVALID_HANDLE;
    RIG_REQUIRE_OUT(count, "keep_client_count");
    *count = k->clients();
    return RIG_OK;
  });
}

RIG_API rig_status rig_keep_stop(rig_keeper keeper, uint64_t timeout_ns) {
  return entry("keep_stop", [&] {
    std::shared_ptr<Keeper> k;
    {
      Pinned<Keeper> p(word_of(keeper), Kind::keeper, "keep_stop");
      if (!p) return RIG_INVALID_HANDLE;
      k = p.share();
    }
    // The handle goes first, so no other call starts on a stopping keeper; this call's reference stops it.
    if (rig_status s = rig::capi::remove(word_of(keeper), Kind::keeper, "keep_stop")) return s;
    return k->stop(timeout_ns);
  });
}

RIG_API rig_status rig_attach(const char *socket_path, rig_device device, rig_attachment *out) {
  return entry("attach", [&] {
    if (!socket_path || !out) return fail(RIG_INVALID_ARGUMENT, "attach: socket_path or out is null");
    auto d = pin_device(device, "attach");
    if (!d) return RIG_INVALID_HANDLE;
    std::unique_ptr<Attachment> a;
    if (rig_status s = Attachment::attach(socket_path, *d, &a)) return s;
    return give(Kind::attachment, std::shared_ptr<Attachment>(std::move(a)), out);
  });
}

RIG_API rig_status rig_attachment_count(rig_attachment attachment, size_t *count) {
  return entry("attachment_count", [&] {
    Pinned<Attachment> a(word_of(attachment), Kind::attachment, "attachment_count");
    if (!a) return RIG_INVALID_HANDLE;
    RIG_REQUIRE_OUT(count, "attachment_count");
    *count = a->table().tensors.size();
    return RIG_OK;
  });
}

RIG_API rig_status rig_attachment_find(rig_attachment attachment, const char *name, size_t *index) {
  return entry("attachment_find", [&] {
    Pinned<Attachment> a(word_of(attachment), Kind::attachment, "attachment_find");
    if (!a) return RIG_INVALID_HANDLE;
    if (!name || !index) return fail(RIG_INVALID_ARGUMENT, "attachment_find: name or index is null");
    const auto &ts = a->table().tensors;
    for (size_t i = 0; i < ts.size(); ++i)
      if (ts[i].name == name) {
        *index = i;
        return RIG_OK;
      }
    return fail(RIG_NOT_FOUND, "attachment_find: no tensor called '%s'", name);
  });
}

RIG_API rig_status rig_attachment_get(rig_attachment attachment, size_t index, rig_keep_tensor *info,
                                      rig_buffer *buffer) {
  return entry("attachment_get", [&] {
    Pinned<Attachment> a(word_of(attachment), Kind::attachment, "attachment_get");
    if (!a) return RIG_INVALID_HANDLE;
    const auto &ts = a->table().tensors;
    if (index >= ts.size())
      return fail(RIG_INVALID_ARGUMENT, "attachment_get: index %zu, the keeper serves %zu tensors", index, ts.size());
    if (info && info->size < sizeof(size_t))
      return fail(RIG_INVALID_ARGUMENT, "attachment_get: info->size is %zu: set it to the struct's sizeof", info->size);
    std::shared_ptr<rig::Buffer> b;
    bool writable = false;
    if (buffer)
      if (rig_status s = a->get(index, &b, &writable)) return s;
    if (info) {
      const rig::keep::TableTensor &t = ts[index];
      rig_keep_tensor r{};
      r.size = sizeof r;
      r.name = t.name.c_str();
      r.dtype = t.dtype;
      r.ggml_type = t.ggml_type;
      r.rank = uint32_t(t.shape.size());
      for (size_t i = 0; i < t.shape.size(); ++i) r.shape[i] = t.shape[i];
      r.length = t.length;
      r.writable = buffer ? writable : a->writable(index);
      if (rig_status s = write_sized(r, "attachment_get", "info", info)) return s;
    }
    if (buffer) return give(Kind::buffer, std::move(b), buffer);
    return RIG_OK;
  });
}

RIG_API rig_status rig_attachment_release(rig_attachment attachment) {
  return entry("attachment_release", [&] {
    return rig::capi::remove(word_of(attachment), Kind::attachment, "attachment_release");
  });
}

}  // extern "C"
