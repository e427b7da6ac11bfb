// The fake stream library's work (fake_stream.h): the streams and events behind a handle, and the kernels'
// view of memory (fake_gpu.h's builtins run through kernel_view).
#pragma once

#include "memory.h"

namespace fake_stream {

// ----- streams and events --------------------------------------------------------------------------------

// The GPU's legacy stream: where the synchronous copies run, ordered among themselves but not with
// non-blocking streams (rig's), as in CUDA.
inline FStream *legacy_of(Gpu *g) {
  std::lock_guard l(state().lock);
  if (!g->legacy) g->legacy = new FStream(g);
  return g->legacy;
}

inline std::shared_ptr<FStream> get_stream(Stream st) {
  auto &s = state();
  std::lock_guard g(s.lock);
  auto it = s.streams.find(stream(st));
  return it == s.streams.end() ? nullptr : it->second;
}

// A call naming stream `st` with another context current, or none: CUDA and HIP run it in the stream's own
// context, and so does the fake, unless the switch stream_calls_need_context asks for a library that
// refuses it (INVALID_CONTEXT), which rig must answer by making the context current (stream/gpu.h).
inline Result wants_context(const FStream &st) {
  if (!state().sw.stream_calls_need_context || current() == st.owner) return SUCCESS;
  return ERROR_INVALID_CONTEXT;
}

inline std::shared_ptr<FEvent> get_event(Event e) {
  auto &s = state();
  std::lock_guard g(s.lock);
  auto it = s.events.find(event(e));
  return it == s.events.end() ? nullptr : it->second;
}

// Queues `op` on `st`, or, while `st` is captured (calls_graphs.h), adds it to the capture instead: it then
// runs only when a graph made from the capture is launched. Launches, copies and fills go through here.
inline void enqueue_op(const std::shared_ptr<FStream> &st, std::function<void()> op) {
  {
    std::lock_guard g(state().lock);
    auto it = state().capturing.find(st.get());
    if (it != state().capturing.end()) {
      it->second.push_back(std::move(op));
      return;
    }
  }
  st->push(std::move(op));
}

// Whether `st` is being captured: the calls a capture cannot hold refuse it.
inline bool captured(const std::shared_ptr<FStream> &st) {
  std::lock_guard g(state().lock);
  return state().capturing.count(st.get()) != 0;
}

using fake_gpu::poll_until;
using fake_gpu::spend;

// ----- kernels -------------------------------------------------------------------------------------------

// The bytes a kernel of `g` may touch at device address [a, a+n): its GPU's memory, a peer's with peer
// access enabled, pinned or registered host memory through its device address. Sets the sticky error
// (illegal address) otherwise.
inline char *kernel_view(Gpu *g, uint64_t a, size_t n, bool write) {
  auto &s = state();
  std::lock_guard l(s.lock);
  Region *r = nullptr;
  char *p = device_view(a, n, &r);
  bool ok = p != nullptr;
  if (ok && (r->kind == Kind::device || r->kind == Kind::ipc) && r->owner != g->ordinal && !g->peers.count(r->owner))
    ok = false;
  if (ok && write && r->kind == Kind::registered && (r->flags & HOST_REGISTER_READ_ONLY)) ok = false;
  if (!ok) {
    g->sticky.store(ERROR_ILLEGAL_ADDRESS, std::memory_order_release);
    return nullptr;
  }
  return p;
}

using Launch = fake_gpu::Launch<Gpu>;

// A module of `gpu` binding every `.entry NAME` of `text` (fake_gpu.h's builtins), or null where the text
// names none. The faces check the image's format first, each with its library's errors.
inline std::unique_ptr<FModule> module_from_text(Gpu *g, const std::string &text) {
  auto m = std::make_unique<FModule>();
  m->gpu = g;
  for (std::string &name : fake_gpu::entry_names(text)) {
    auto f = std::make_unique<FFunction>();
    f->name = std::move(name);
    f->module = m.get();
    m->functions.push_back(std::move(f));
  }
  return m->functions.empty() ? nullptr : std::move(m);
}

// Hands a loaded module out as the library's handle and counts it.
inline Result keep_module(std::unique_ptr<FModule> m, Module *out) {
  auto &s = state();
  std::lock_guard g(s.lock);
  s.modules.insert(m.get());
  ++s.count.live_modules;
  *out = reinterpret_cast<Module>(m.release());
  return SUCCESS;
}

}  // namespace fake_stream
