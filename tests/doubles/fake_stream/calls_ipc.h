// The stream table's calls of interprocess handles, modules and launches, as fake_<field> (fake_stream.h).
#pragma once

#include "work.h"

using namespace fake_stream;

// Interprocess handles (common/fake_ipc.h): device memory must come from the arena (fake_stream::arena).

extern "C" Result fake_ipc_get_memory(IpcHandle *out, DevicePtr address) {
  entered(Entry::ipc_get_memory);
  if (!current()) return ERROR_INVALID_CONTEXT;
  if (!out) return ERROR_INVALID_VALUE;
  std::lock_guard g(state().lock);
  auto it = state().regions.find(address);  // the base of a plain allocation, as the libraries require
  if (it == state().regions.end() || it->second.kind != Kind::device) return ERROR_INVALID_VALUE;
  void *p = reinterpret_cast<void *>(address);
  auto h = fake_ipc::describe("fake-ipc-memory", arena().fd(), arena().offset_of(p), it->second.length,
                              it->second.owner);
  std::memcpy(out, &h, sizeof h);
  return SUCCESS;
}

extern "C" Result fake_ipc_open_memory(DevicePtr *address, IpcHandle handle, unsigned flags) {
  entered(Entry::ipc_open_memory);
  constexpr unsigned lazy_peer_access = 0x1;  // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
  if (!address || flags > lazy_peer_access) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  fake_ipc::Handle h;
  fake_ipc::Refusal why;
  void *p = fake_ipc::open(&handle, "fake-ipc-memory", &h, &why);
  if (!p) return refused(why);
  std::lock_guard g(state().lock);
  // The bytes stay on the exporter's GPU. Opened from another GPU of the host, kernels reach them through
  // peer access, which the lazy flag enables as enabling peer access would; without the flag only where it
  // was enabled already. Where the two GPUs cannot be peers, the open fails.
  int owner = h.device >= 0 ? h.device : cur->ordinal;
  if (owner != cur->ordinal) {
    if (!state().sw.peer_access) {
      munmap(p, fake_ipc::pages(h.length));
      return ERROR_PEER_ACCESS_UNSUPPORTED;
    }
    if (flags & lazy_peer_access) cur->peers.insert(owner);
  }
  state().regions[reinterpret_cast<uintptr_t>(p)] = {reinterpret_cast<uintptr_t>(p), h.length, Kind::ipc, owner};
  ++state().count.live_ipc_mappings;
  *address = reinterpret_cast<uintptr_t>(p);
  return SUCCESS;
}

extern "C" Result fake_ipc_close_memory(DevicePtr address) {
  entered(Entry::ipc_close_memory);
  Region r;
  {
    std::lock_guard g(state().lock);
    auto it = state().regions.find(address);
    if (it == state().regions.end() || it->second.kind != Kind::ipc) return ERROR_INVALID_VALUE;
    r = it->second;
    state().regions.erase(it);
    --state().count.live_ipc_mappings;
  }
  munmap(reinterpret_cast<void *>(address), fake_ipc::pages(r.length));
  return SUCCESS;
}

extern "C" Result fake_ipc_get_event(IpcHandle *out, Event e) {
  entered(Entry::ipc_get_event);
  if (!current()) return ERROR_INVALID_CONTEXT;  // as the H200's driver answers
  auto ev = get_event(e);
  if (!ev || !out) return ERROR_INVALID_HANDLE;
  if (!ev->ipc || ev->opened) return ERROR_INVALID_VALUE;  // made without the interprocess flag
  auto h = fake_ipc::describe("fake-ipc-event", ev->exported.fd, 0, fake_ipc::kPage);
  std::memcpy(out, &h, sizeof h);
  return SUCCESS;
}

extern "C" Result fake_ipc_open_event(Event *out, IpcHandle handle) {
  entered(Entry::ipc_open_event);
  if (!out) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  fake_ipc::Handle h;
  fake_ipc::Refusal why;
  void *p = fake_ipc::open(&handle, "fake-ipc-event", &h, &why);
  if (!p) return refused(why);
  auto e = std::make_shared<FEvent>();
  e->gpu = cur;
  e->ipc.reset(fake_ipc::EventPage::adopt(p));
  e->opened = true;
  std::lock_guard g(state().lock);
  state().events[e.get()] = e;
  *out = reinterpret_cast<Event>(e.get());
  return SUCCESS;
}

// Modules and launches (loading is each face's: its formats, options and errors).

extern "C" Result fake_module_unload(Module m) {
  entered(Entry::module_unload);
  auto &s = state();
  {
    std::lock_guard g(s.lock);
    if (!s.modules.erase(module(m))) return ERROR_INVALID_HANDLE;
    --s.count.live_modules;
  }
  delete module(m);
  return SUCCESS;
}

extern "C" Result fake_module_function(Function *out, Module m, const char *name) {
  entered(Entry::module_function);
  if (!out || !name) return ERROR_INVALID_VALUE;
  {
    std::lock_guard g(state().lock);
    if (!state().modules.count(module(m))) return ERROR_INVALID_HANDLE;
  }
  for (auto &f : module(m)->functions)
    if (f->name == name && fake_gpu::builtin<Gpu>(f->name)) {
      *out = reinterpret_cast<Function>(f.get());
      return SUCCESS;
    }
  return ERROR_NOT_FOUND;
}

extern "C" Result fake_launch(Function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shared, Stream st_handle, void **params, void **extra) {
  entered(Entry::launch);
  auto *f = reinterpret_cast<FFunction *>(fn);
  if (!f || extra) return ERROR_INVALID_VALUE;
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (int e = st->owner->sticky.load()) return e;
  {
    std::lock_guard g(state().lock);
    if (!state().modules.count(f->module)) return ERROR_INVALID_HANDLE;
  }
  if (f->module->gpu != st->owner) return ERROR_INVALID_HANDLE;  // a function loaded on another GPU
  const Limits &l = face().limits;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024 ||
      shared > static_cast<unsigned>(l.max_shared_per_block))
    return ERROR_INVALID_VALUE;
  const fake_gpu::Builtin<Gpu> *b = fake_gpu::builtin<Gpu>(f->name);
  Launch launch{st->owner, {gx, gy, gz}, {bx, by, bz}, {}};
  for (size_t i = 0; i < b->sizes.size(); ++i) {
    if (!params || !params[i]) return ERROR_INVALID_VALUE;
    const char *p = static_cast<const char *>(params[i]);
    launch.params.emplace_back(p, p + b->sizes[i]);  // the library copies parameters at launch
  }
  bool fails = false;
  {
    std::lock_guard g(state().lock);
    auto &left = state().launches_until_failure;
    if (left > 0 && --left == 0) fails = true;
  }
  ++state().count.launches;
  long long delay = state().sw.launch_delay_us;
  enqueue_op(st, [launch = std::move(launch), b, fails, delay] {
    if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    if (fails) {
      launch.owner->sticky.store(ERROR_LAUNCH_FAILED, std::memory_order_release);
      return;
    }
    b->run(launch);
  });
  return SUCCESS;
}
