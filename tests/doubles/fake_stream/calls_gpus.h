// The stream table's calls of the library, its GPUs, contexts, streams, events and stream memory
// operations, as fake_<field> (fake_stream.h).
#pragma once

#include "work.h"

using namespace fake_stream;

// The library and its GPUs.

extern "C" Result fake_init(unsigned flags) {
  entered(Entry::init);
  if (flags != 0) return ERROR_INVALID_VALUE;
  auto &s = state();
  std::lock_guard g(s.lock);
  if (!s.initialized) {
    read_env();
    s.initialized = true;
  }
  return SUCCESS;
}

extern "C" Result fake_driver_version(int *version) {
  entered(Entry::driver_version);
  if (!version) return ERROR_INVALID_VALUE;
  *version = face().driver_version;
  return SUCCESS;
}

extern "C" Result fake_device_count(int *count) {
  entered(Entry::device_count);
  if (!count) return ERROR_INVALID_VALUE;
  *count = static_cast<int>(state().sw.devices);
  return SUCCESS;
}

extern "C" Result fake_device_name(char *name, int length, int device) {
  entered(Entry::device_name);
  if (!name || length <= 0 || !valid_device(device)) return ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(length), face().device_name, device);
  return SUCCESS;
}

extern "C" Result fake_total_memory(size_t *bytes, int device) {
  entered(Entry::total_memory);
  if (!bytes || !valid_device(device)) return ERROR_INVALID_VALUE;
  *bytes = face().total_memory;
  return SUCCESS;
}

extern "C" Result fake_device_attribute(int *value, int attribute, int device) {
  entered(Entry::device_attribute);
  if (!value || !valid_device(device) || attribute < 0) return ERROR_INVALID_VALUE;
  const Switches &sw = state().sw;
  const AttributeNumbers &a = face().attributes;
  const Limits &l = face().limits;
  *value = 0;  // what the fakes do not model
  for (int i = 0; i < 3; ++i) {
    if (attribute == a.max_block[i]) *value = l.max_block[i];
    if (attribute == a.max_grid[i]) *value = l.max_grid[i];
  }
  if (attribute == a.max_threads_per_block) *value = 1024;
  if (attribute == a.max_shared_per_block) *value = l.max_shared_per_block;
  if (attribute == a.can_map_host_memory || attribute == a.unified_addressing) *value = 1;
  if (attribute == a.pageable_uses_host_page_tables) *value = static_cast<int>(sw.pageable_host_page_tables);
  if (attribute == a.read_only_host_register) *value = static_cast<int>(sw.read_only_supported);
  if (attribute == a.stream_memory_operations) *value = static_cast<int>(sw.memops);
  if (attribute == a.integrated) {
    if (sw.integrated_query_fails) return ERROR_INVALID_VALUE;
    *value = static_cast<int>(sw.integrated);
  }
  if (attribute == a.host_register_supported) {
    if (sw.host_register_supported < 0) return ERROR_INVALID_VALUE;  // a library older than the attribute
    *value = static_cast<int>(sw.host_register_supported);
  }
  return SUCCESS;
}

extern "C" Result fake_can_access_peer(int *can, int device, int peer) {
  entered(Entry::can_access_peer);
  if (!can || !valid_device(device) || !valid_device(peer)) return ERROR_INVALID_DEVICE;
  *can = device != peer && state().sw.peer_access ? 1 : 0;
  return SUCCESS;
}

// Contexts: a GPU is current on a thread.

extern "C" Result fake_get_current(Context *context) {
  entered(Entry::get_current);
  if (!context) return ERROR_INVALID_VALUE;
  *context = handle(current());
  return SUCCESS;
}

extern "C" Result fake_set_current(Context context) {
  entered(Entry::set_current);
  current_gpu = gpu(context);
  return SUCCESS;
}

extern "C" Result fake_synchronize_context(void) {
  entered(Entry::synchronize_context);
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  std::vector<std::shared_ptr<FStream>> mine;
  FStream *legacy = nullptr;
  {
    auto &s = state();
    std::lock_guard g(s.lock);
    for (auto &[raw, st] : s.streams)
      if (st->owner == cur) mine.push_back(st);
    legacy = cur->legacy;
  }
  for (auto &st : mine) st->drain();  // without the state lock: kernels running in workers take it
  if (legacy) legacy->drain();
  return sticky_or(cur, SUCCESS);
}

extern "C" Result fake_enable_peer_access(Context peer, unsigned flags) {
  entered(Entry::enable_peer_access);
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (flags != 0 || !peer) return ERROR_INVALID_VALUE;
  auto &s = state();
  std::lock_guard g(s.lock);
  Gpu *p = gpu(peer);
  if (p == cur || !s.sw.peer_access) return ERROR_PEER_ACCESS_UNSUPPORTED;
  if (cur->peers.count(p->ordinal)) return ERROR_PEER_ACCESS_ALREADY_ENABLED;
  cur->peers.insert(p->ordinal);
  return SUCCESS;
}

// Streams and events.

extern "C" Result fake_stream_create(Stream *out, unsigned flags) {
  entered(Entry::stream_create);
  (void)flags;
  if (!out) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  auto st = std::make_shared<FStream>(cur);
  auto &s = state();
  std::lock_guard g(s.lock);
  s.streams[st.get()] = st;
  ++s.count.live_streams;
  *out = reinterpret_cast<Stream>(st.get());
  return SUCCESS;
}

extern "C" Result fake_stream_destroy(Stream st_handle) {
  entered(Entry::stream_destroy);
  std::shared_ptr<FStream> st;
  auto &s = state();
  {
    std::lock_guard g(s.lock);
    auto it = s.streams.find(stream(st_handle));
    if (it == s.streams.end()) return ERROR_INVALID_HANDLE;
    st = std::move(it->second);
    s.streams.erase(it);
    --s.count.live_streams;
  }
  st.reset();  // the last owner finishes queued work and joins the worker (waits that cannot be met give up)
  return SUCCESS;
}

extern "C" Result fake_stream_query(Stream st_handle) {
  entered(Entry::stream_query);
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (int e = st->owner->sticky.load(std::memory_order_acquire)) return e;
  return st->idle() ? SUCCESS : ERROR_NOT_READY;
}

extern "C" Result fake_stream_synchronize(Stream st_handle) {
  entered(Entry::stream_synchronize);
  if (!st_handle) {  // the legacy stream
    Gpu *cur = current();
    if (!cur) return ERROR_INVALID_CONTEXT;
    legacy_of(cur)->drain();
    return sticky_or(cur, SUCCESS);
  }
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  st->drain();
  return sticky_or(st->owner, SUCCESS);
}

extern "C" Result fake_event_create(Event *out, unsigned flags) {
  entered(Entry::event_create);
  if (!out) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  auto e = std::make_shared<FEvent>();
  e->gpu = cur;
  if (flags & EVENT_INTERPROCESS) {
    if (!(flags & EVENT_DISABLE_TIMING)) return ERROR_INVALID_VALUE;  // the rule for interprocess events
    e->ipc.reset(fake_ipc::EventPage::make(&e->exported.fd));
    if (!e->ipc) return ERROR_OUT_OF_MEMORY;
  }
  auto &s = state();
  std::lock_guard g(s.lock);
  s.events[e.get()] = e;
  *out = reinterpret_cast<Event>(e.get());
  return SUCCESS;
}

extern "C" Result fake_event_destroy(Event e) {
  entered(Entry::event_destroy);
  auto &s = state();
  std::lock_guard g(s.lock);
  return s.events.erase(event(e)) ? SUCCESS : ERROR_INVALID_HANDLE;  // queued operations hold their own reference
}

extern "C" Result fake_event_record(Event e, Stream st_handle) {
  entered(Entry::event_record);
  auto ev = get_event(e);
  auto st = get_stream(st_handle);
  if (!ev || !st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (int err = st->owner->sticky.load()) return err;
  ++state().count.event_records;
  ev->gpu = st->owner;
  auto rec = std::make_shared<FRecord>();
  if (ev->ipc) {
    rec->page = ev->ipc;
    rec->number = ev->ipc->words()->latest.fetch_add(1, std::memory_order_acq_rel) + 1;
  }
  {
    std::lock_guard g(ev->lock);
    ev->latest = rec;
  }
  st->push([rec] {
    rec->done.store(true, std::memory_order_release);
    if (rec->page) fake_ipc::complete(rec->page->words(), rec->number);
  });
  return SUCCESS;
}

extern "C" Result fake_event_query(Event e) {
  entered(Entry::event_query);
  auto ev = get_event(e);
  if (!ev) return ERROR_INVALID_HANDLE;
  ++state().count.event_queries;
  if (int err = ev->gpu.load()->sticky.load(std::memory_order_acquire)) return err;
  auto rec = ev->current();
  return !rec || rec->ready() ? SUCCESS : ERROR_NOT_READY;
}

extern "C" Result fake_event_synchronize(Event e) {
  entered(Entry::event_synchronize);
  auto ev = get_event(e);
  if (!ev) return ERROR_INVALID_HANDLE;
  ++state().count.event_syncs;
  auto rec = ev->current();
  while (rec && !rec->ready()) {
    if (int err = ev->gpu.load()->sticky.load(std::memory_order_acquire)) return err;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return SUCCESS;
}

extern "C" Result fake_stream_wait_event(Stream st_handle, Event e, unsigned flags) {
  entered(Entry::stream_wait_event);
  (void)flags;
  auto ev = get_event(e);
  auto st = get_stream(st_handle);
  if (!ev || !st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (int err = st->owner->sticky.load()) return err;
  auto rec = ev->current();  // the latest record, as the libraries capture it
  ++state().count.event_waits;
  if (state().sw.ignore_waits) return SUCCESS;  // a broken driver: proves the tests see a missing wait
  FStream *raw = st.get();  // the worker runs this op, so the stream outlives it
  st->push([raw, rec] { poll_until(raw, [&] { return !rec || rec->ready(); }); });
  return SUCCESS;
}

// The word a stream memory operation addresses (a device address of pinned or registered host memory), or
// null.
static uint64_t *word_at(DevicePtr address) {
  std::lock_guard g(state().lock);
  return reinterpret_cast<uint64_t *>(device_view(address, 8));
}

extern "C" Result fake_write_value64(Stream st_handle, DevicePtr address, uint64_t value, unsigned flags) {
  entered(Entry::write_value64);
  (void)flags;
  if (!state().sw.memops) return ERROR_NOT_SUPPORTED;
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (int e = st->owner->sticky.load()) return e;
  uint64_t *word = word_at(address);
  if (!word) return ERROR_INVALID_VALUE;
  ++state().count.write_values;
  st->push([word, value] { __atomic_store_n(word, value, __ATOMIC_RELEASE); });
  return SUCCESS;
}

extern "C" Result fake_wait_value64(Stream st_handle, DevicePtr address, uint64_t value, unsigned flags) {
  entered(Entry::wait_value64);
  if (!state().sw.memops) return ERROR_NOT_SUPPORTED;
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (flags != WAIT_VALUE_GEQ) return ERROR_INVALID_VALUE;  // rig uses GEQ only
  if (int e = st->owner->sticky.load()) return e;
  uint64_t *word = word_at(address);
  if (!word) return ERROR_INVALID_VALUE;
  ++state().count.wait_values;
  if (state().sw.ignore_waits) return SUCCESS;  // a broken driver: proves the tests see a missing wait
  FStream *raw = st.get();
  st->push([raw, word, value] {
    poll_until(raw, [&] { return static_cast<int64_t>(__atomic_load_n(word, __ATOMIC_ACQUIRE) - value) >= 0; });
  });
  return SUCCESS;
}
