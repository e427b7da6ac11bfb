// The stream table's calls of memory: allocations, registrations, copies, fills, as fake_<field>
// (fake_stream.h).
#pragma once

#include <tuple>
#include <vector>

#include "work.h"

using namespace fake_stream;

// Memory.

extern "C" Result fake_mem_alloc(DevicePtr *address, size_t bytes) {
  entered(Entry::mem_alloc);
  if (!address || bytes == 0) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  void *p = state().memory.allocate(bytes, state().sw.device_memory_limit);
  if (!p) return ERROR_OUT_OF_MEMORY;
  std::lock_guard g(state().lock);
  add_region({reinterpret_cast<uintptr_t>(p), bytes, Kind::device, cur->ordinal});
  *address = reinterpret_cast<uintptr_t>(p);
  return SUCCESS;
}

extern "C" Result fake_mem_free(DevicePtr address) {
  entered(Entry::mem_free);
  return free_region(address, Kind::device);
}

extern "C" Result fake_host_alloc(void **host, size_t bytes, unsigned flags) {
  entered(Entry::host_alloc);
  if (!host || bytes == 0) return ERROR_INVALID_VALUE;
  if (!current()) return ERROR_INVALID_CONTEXT;
  void *p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!p) return ERROR_OUT_OF_MEMORY;
  std::lock_guard g(state().lock);
  add_region({reinterpret_cast<uintptr_t>(p), bytes, Kind::host, -1, flags});
  *host = p;
  return SUCCESS;
}

extern "C" Result fake_host_free(void *host) {
  entered(Entry::host_free);
  return host ? free_region(reinterpret_cast<uintptr_t>(host), Kind::host) : SUCCESS;  // nothing to free
}

extern "C" Result fake_host_device_pointer(DevicePtr *address, void *host, unsigned flags) {
  entered(Entry::host_device_pointer);
  if (!address || flags != 0) return ERROR_INVALID_VALUE;
  std::lock_guard g(state().lock);
  auto p = reinterpret_cast<uintptr_t>(host);
  if (FalseRegistration *f = find_false(p, 1)) {  // the device reaches the shadow, not the host's pages
    *address = reinterpret_cast<uintptr_t>(f->shadow) + (p - f->begin);
    return SUCCESS;
  }
  Region *r = find(p, 1);
  if (!r || (r->kind != Kind::host && r->kind != Kind::registered)) return ERROR_INVALID_VALUE;
  *address = device_address_of(*r, p);
  return SUCCESS;
}

// A registration the library answers with success but which cannot serve: the device reads `shadow` (zeros
// for unreadable pages, else the complement of the host's bytes now). Caller holds the lock.
static Result register_falsely(uintptr_t p, size_t bytes, unsigned flags, bool readable, std::string why) {
  auto &s = state();
  FalseRegistration f{p, bytes, static_cast<char *>(std::malloc(bytes)), std::move(why)};
  if (!f.shadow) return ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < bytes; ++i)
    f.shadow[i] = readable ? static_cast<char>(~reinterpret_cast<const char *>(p)[i]) : 0;
  s.regions[reinterpret_cast<uintptr_t>(f.shadow)] = {reinterpret_cast<uintptr_t>(f.shadow), bytes, Kind::shadow, -1,
                                                      flags};
  s.false_registrations.push_back(std::move(f));
  ++s.count.false_successes;
  return SUCCESS;
}

extern "C" Result fake_host_register(void *host, size_t bytes, unsigned flags) {
  entered(Entry::host_register);
  if (!host || bytes == 0) return ERROR_INVALID_VALUE;
  if (!current()) return ERROR_INVALID_CONTEXT;
  auto &s = state();
  std::lock_guard g(s.lock);
  ++s.count.register_calls;
  s.count.last_register_flags = flags;
  if (s.sw.register_refuse) return static_cast<Result>(s.sw.register_refuse);
  if (fake_gpu::refuse_register_now(s.sw.register_refuse_after)) return ERROR_OUT_OF_MEMORY;
  if ((flags & HOST_REGISTER_READ_ONLY) && !s.sw.read_only_supported) return ERROR_NOT_SUPPORTED;
  auto p = reinterpret_cast<uintptr_t>(host);
  bool unmapped = false, readable = true;
  std::string why;
  if (face().false_registrations) {
    why = cannot_serve(p, p + bytes, &unmapped, &readable);
    if (unmapped) return ERROR_INVALID_VALUE;
  }
  // Where asked, as the drivers do: readable pages the process cannot write register only with the
  // read-only flag.
  if (s.sw.read_only_pages_need_flag && readable && !(flags & HOST_REGISTER_READ_ONLY) &&
      !fake_gpu::writable(p, p + bytes))
    return ERROR_INVALID_VALUE;
  // Any overlap with a registration (or with memory the library allocated) is "already registered", where
  // the library tells (CUDA).
  if (!face().false_registrations && overlaps_registration(p, p + bytes, false))
    return ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  ++s.count.registers;
  if (!why.empty()) return register_falsely(p, bytes, flags, readable, why);
  Region r{p, bytes, Kind::registered, -1, flags, nullptr, fake_gpu::file_backed(p, p + bytes)};
  if (s.sw.register_wrong_bytes) {
    // The device sees other bytes than the host wrote: the complement of what was there at registration.
    r.shadow = static_cast<char *>(std::malloc(bytes));
    if (!r.shadow) return ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < bytes; ++i) r.shadow[i] = static_cast<char>(~static_cast<const char *>(host)[i]);
    s.regions[reinterpret_cast<uintptr_t>(r.shadow)] = {reinterpret_cast<uintptr_t>(r.shadow), bytes, Kind::shadow,
                                                        -1, flags};
  }
  s.regions[p] = r;
  return SUCCESS;
}

extern "C" Result fake_host_unregister(void *host) {
  entered(Entry::host_unregister);
  auto &s = state();
  std::lock_guard g(s.lock);
  auto p = reinterpret_cast<uintptr_t>(host);
  // The latest registration starting at p: a false one if any (it was made after the real one it overlaps).
  auto &fv = s.false_registrations;
  for (auto it = fv.rbegin(); it != fv.rend(); ++it) {
    if (it->begin != p) continue;
    if (s.sw.false_unregister_713) return ERROR_HOST_MEMORY_NOT_REGISTERED;
    s.regions.erase(reinterpret_cast<uintptr_t>(it->shadow));
    std::free(it->shadow);
    fv.erase(std::next(it).base());
    ++s.count.unregisters;
    return SUCCESS;
  }
  auto it = s.regions.find(p);
  if (it == s.regions.end() || it->second.kind != Kind::registered) {
    Region *inside = find(p, 1);
    return inside && inside->kind == Kind::registered ? ERROR_INVALID_VALUE : ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  if (s.sw.unregister_fail) {
    if (s.sw.unregister_fail == 1) s.sw.unregister_fail = 0;
    return ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  if (char *shadow = it->second.shadow) {
    s.regions.erase(reinterpret_cast<uintptr_t>(shadow));
    std::free(shadow);
  }
  s.regions.erase(p);
  ++s.count.unregisters;
  return SUCCESS;
}

extern "C" Result fake_copy_to_device(DevicePtr dst, const void *src, size_t bytes) {
  entered(Entry::copy_to_device);
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  if (bytes == 0) return SUCCESS;
  auto &s = state();
  long long ns_per_kib = 0;
  bool pageable = false;
  char *to;
  const char *from;
  {
    std::lock_guard g(s.lock);
    to = device_view(dst, bytes);
    if (!to) return ERROR_INVALID_VALUE;
    from = upload_source(src, bytes, &ns_per_kib, &pageable);
  }
  if (!face().pageable_uploads_land_later) {
    std::memmove(to, from, bytes);
    spend(ns_per_kib * static_cast<long long>(bytes) / 1024);
    return SUCCESS;
  }
  FStream *legacy = legacy_of(cur);
  if (pageable) {
    // The call returns once pageable bytes are staged, before the DMA lands: the copy finishes later on the
    // legacy stream, so work on a non-blocking stream that does not wait for it reads the old bytes.
    auto staged = std::make_shared<std::vector<char>>(from, from + bytes);
    long long delay = s.sw.pageable_dma_delay_us;
    legacy->push([to, staged, delay] {
      if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
      std::memmove(to, staged->data(), staged->size());
    });
    spend(ns_per_kib * static_cast<long long>(bytes) / 1024);
    return SUCCESS;
  }
  legacy->drain();  // pinned and registered sources: synchronous, after earlier legacy-stream copies
  std::memmove(to, from, bytes);
  spend(ns_per_kib * static_cast<long long>(bytes) / 1024);
  return SUCCESS;
}

extern "C" Result fake_copy_to_host(void *dst, DevicePtr src, size_t bytes) {
  entered(Entry::copy_to_host);
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  if (bytes == 0) return SUCCESS;
  const char *from;
  FStream *legacy = nullptr;
  {
    std::lock_guard g(state().lock);
    from = device_view(src, bytes);
    if (!from) return ERROR_INVALID_VALUE;
    legacy = cur->legacy;
  }
  if (legacy) legacy->drain();  // ordered after earlier copies on the legacy stream
  std::memmove(dst, from, bytes);
  return SUCCESS;
}

extern "C" Result fake_copy_async(DevicePtr dst, DevicePtr src, size_t bytes, Stream st_handle) {
  entered(Entry::copy_async);
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (int e = st->owner->sticky.load()) return e;
  char *to;
  const char *from;
  {
    std::lock_guard g(state().lock);
    to = device_view(dst, bytes);
    from = device_view(src, bytes);
    if (!to || !from) return ERROR_INVALID_VALUE;
    if (spans_registrations(dst, bytes) || spans_registrations(src, bytes)) return ERROR_INVALID_VALUE;
  }
  ++state().count.copies;
  long long delay = state().sw.copy_delay_us;
  enqueue_op(st, [to, from, bytes, delay] {
    if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    std::memmove(to, from, bytes);
  });
  return SUCCESS;
}

// cuMemcpyBatchAsync (CUDA 13's _v2 signature; fake_cuda.cpp adapts 12.8's): every copy checked as
// cuMemcpyAsync checks one, and the attributes as CUDA does (one or more, the first applying from copy 0,
// each reading its source in some valid order), before anything is enqueued. The batch runs in stream
// order as one operation; inside it CUDA promises no order, and the fake runs the copies last to first, so
// that copies of one batch that depend on each other (which rig must never put in one) read wrong bytes.
extern "C" Result fake_copy_batch(DevicePtr *dsts, DevicePtr *srcs, size_t *sizes, size_t count,
                                  MemcpyAttributes *attributes, size_t *attribute_starts, size_t attribute_count,
                                  Stream st_handle) {
  entered(Entry::copy_batch);
  if (!dsts || !srcs || !sizes || !count || !attributes || !attribute_starts || !attribute_count ||
      attribute_count > count || attribute_starts[0] != 0)
    return ERROR_INVALID_VALUE;
  for (size_t i = 0; i < attribute_count; ++i)
    if (attributes[i].src_access_order < 1 || attributes[i].src_access_order > 3 ||
        (i && attribute_starts[i] <= attribute_starts[i - 1]))
      return ERROR_INVALID_VALUE;
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;  // the legacy stream (null) included: CUDA refuses it
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (int e = st->owner->sticky.load()) return e;
  if (captured(st)) return ERROR_NOT_SUPPORTED;  // CUDA has no graph node of a batch of copies
  std::vector<std::tuple<char *, const char *, size_t>> copies(count);
  {
    std::lock_guard g(state().lock);
    for (size_t i = 0; i < count; ++i) {
      char *to = device_view(dsts[i], sizes[i]);
      const char *from = device_view(srcs[i], sizes[i]);
      if (!to || !from || !sizes[i]) return ERROR_INVALID_VALUE;
      if (spans_registrations(dsts[i], sizes[i]) || spans_registrations(srcs[i], sizes[i])) return ERROR_INVALID_VALUE;
      copies[i] = {to, from, sizes[i]};
    }
  }
  state().count.copies += static_cast<long long>(count);
  long long delay = state().sw.copy_delay_us;
  st->push([copies = std::move(copies), delay] {
    if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    for (auto it = copies.rbegin(); it != copies.rend(); ++it)
      std::memmove(std::get<0>(*it), std::get<1>(*it), std::get<2>(*it));
  });
  return SUCCESS;
}

extern "C" Result fake_fill_async(DevicePtr dst, unsigned char value, size_t bytes, Stream st_handle) {
  entered(Entry::fill_async);
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (int e = st->owner->sticky.load()) return e;
  char *to;
  {
    std::lock_guard g(state().lock);
    to = device_view(dst, bytes);
    if (!to) return ERROR_INVALID_VALUE;
  }
  enqueue_op(st, [to, value, bytes] { std::memset(to, value, bytes); });
  return SUCCESS;
}

