// The stream table's graph calls, as fake_<field> (fake_stream.h): stream capture of launches, copies and
// fills (work.h's enqueue_op adds them to the capture), graphs, executable graphs and their launch, which
// runs the captured operations in capture order as one operation of the stream.
#pragma once

#include <functional>
#include <vector>

#include "work.h"

using namespace fake_stream;

namespace fake_stream {
constexpr Result kIllegalState = 401;  // CUDA_ERROR_ILLEGAL_STATE: no capture to end, or one already begun
}  // namespace fake_stream

extern "C" Result fake_capture_begin(Stream st_handle, int mode) {
  entered(Entry::capture_begin);
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;  // the legacy stream cannot be captured
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (mode < 0 || mode > 2) return ERROR_INVALID_VALUE;
  std::lock_guard g(state().lock);
  if (state().capturing.count(st.get())) return kIllegalState;
  state().capturing[st.get()];
  return SUCCESS;
}

extern "C" Result fake_capture_end(Stream st_handle, Graph *out) {
  entered(Entry::capture_end);
  if (!out) return ERROR_INVALID_VALUE;
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  std::lock_guard g(state().lock);
  auto it = state().capturing.find(st.get());
  if (it == state().capturing.end()) return kIllegalState;
  auto *graph = new char;  // a unique address as the handle
  state().graphs[graph] = std::move(it->second);
  state().capturing.erase(it);
  *out = reinterpret_cast<Graph>(graph);
  return SUCCESS;
}

extern "C" Result fake_graph_instantiate(GraphExec *out, Graph graph, unsigned long long flags) {
  entered(Entry::graph_instantiate);
  if (!out || flags) return ERROR_INVALID_VALUE;
  std::lock_guard g(state().lock);
  auto it = state().graphs.find(graph);
  if (it == state().graphs.end()) return ERROR_INVALID_HANDLE;
  auto *exec = new char;
  state().graph_execs[exec] = it->second;  // a copy: the graph may be destroyed now
  *out = reinterpret_cast<GraphExec>(exec);
  return SUCCESS;
}

extern "C" Result fake_graph_launch(GraphExec exec, Stream st_handle) {
  entered(Entry::graph_launch);
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (Result c = wants_context(*st); c != SUCCESS) return c;
  if (int e = st->owner->sticky.load()) return e;
  std::vector<std::function<void()>> ops;
  {
    std::lock_guard g(state().lock);
    auto it = state().graph_execs.find(exec);
    if (it == state().graph_execs.end()) return ERROR_INVALID_HANDLE;
    ops = it->second;  // the launch runs what the executable graph held now, whatever is destroyed later
  }
  enqueue_op(st, [ops = std::move(ops)] {
    for (const auto &op : ops) op();
  });
  return SUCCESS;
}

extern "C" Result fake_graph_exec_destroy(GraphExec exec) {
  entered(Entry::graph_exec_destroy);
  std::lock_guard g(state().lock);
  auto it = state().graph_execs.find(exec);
  if (it == state().graph_execs.end()) return ERROR_INVALID_HANDLE;
  delete static_cast<char *>(it->first);
  state().graph_execs.erase(it);
  return SUCCESS;
}

extern "C" Result fake_graph_destroy(Graph graph) {
  entered(Entry::graph_destroy);
  std::lock_guard g(state().lock);
  auto it = state().graphs.find(graph);
  if (it == state().graphs.end()) return ERROR_INVALID_HANDLE;
  delete static_cast<char *>(it->first);
  state().graphs.erase(it);
  return SUCCESS;
}
