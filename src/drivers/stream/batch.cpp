// A batch of runs handed to a stream device at once (rig_submit_many): one turn, one context check, the
// waits once, and consecutive copies as one batch of copies where the library has one (cuMemcpyBatchAsync).
// The copies of one such batch run in no order CUDA promises, so only copies that touch no bytes another
// of them writes are gathered; the rest start a new group, which the stream orders after the last.
// A batch of recorded runs that comes again (the same records in the same order) is captured
// into a graph the second time and replayed by one graph launch from then on: its calls were fixed when
// the records were made, so the graph holds what the calls would enqueue. The first time it is only
// remembered, so a batch made once costs no capture.
#include "drivers/stream/device.h"

namespace rig::stream {
namespace {

// Whether [a, a+n) and [b, b+m) share a byte.
bool overlap(DevicePtr a, size_t n, DevicePtr b, size_t m) { return a < b + m && b < a + n; }

}  // namespace

bool StreamDevice::joins_copies(const PreparedCall &call) const {
  if (copies_.count == kCopyGroup) return false;
  for (size_t i = 0; i < copies_.count; ++i) {
    DevicePtr dst = copies_.dsts[i], src = copies_.srcs[i];
    size_t n = copies_.sizes[i];
    // Write after write or read, and read after write: the stream would order them, a batch does not.
    if (overlap(call.dst, call.length, dst, n) || overlap(call.dst, call.length, src, n) ||
        overlap(call.src, call.length, dst, n))
      return false;
  }
  return true;
}

rig_status StreamDevice::flush_copies() {
  size_t n = copies_.count;
  if (!n) return RIG_OK;
  copies_.count = 0;
  if (n > 1 && !copy_batch_refused_) {
    // Every source is read in stream order, after the work before the batch; the hints are for managed
    // memory only, which rig does not allocate.
    MemcpyAttributes in_order = {MEMCPY_SRC_ACCESS_ORDER_STREAM, 0, 0, 0, 0, 0};
    size_t from_first = 0;
    Result r = calls_.copy_batch(copies_.dsts, copies_.srcs, copies_.sizes, n, &in_order, &from_first, 1, stream_);
    if (r == SUCCESS) [[likely]]
      return RIG_OK;
    // A driver that refuses the batch's arguments refuses them while parsing them, before it enqueues any
    // copy: ask it no more, and enqueue these one by one. Any other failure is the stream's.
    if (r != ERROR_INVALID_VALUE && r != ERROR_NOT_SUPPORTED) return fault(family_.names.copy_batch, r, true);
    copy_batch_refused_ = true;
  }
  for (size_t i = 0; i < n; ++i) {
    Result r = calls_.copy_async(copies_.dsts[i], copies_.srcs[i], copies_.sizes[i], stream_);
    if (r != SUCCESS) return fault(family_.names.copy_async, r, true);
  }
  return RIG_OK;
}

StreamDevice::BatchGraph *StreamDevice::find_graph(std::span<const BatchWork> batch) {
  for (BatchGraph &g : graphs_) {
    if (g.count != batch.size()) continue;
    size_t i = 0;
    while (i < batch.size() && g.serials[i] == recorded_serial(*batch[i].recorded)) ++i;
    if (i == batch.size()) return &g;
  }
  return nullptr;
}

void StreamDevice::remember_graph(std::span<const BatchWork> batch) {
  BatchGraph &g = graphs_[next_graph_];
  next_graph_ = (next_graph_ + 1) % kGraphs;
  // An executable graph may be given back while a launch of it runs: the driver frees it once done.
  if (g.exec) calls_.graph_exec_destroy(g.exec);
  g.exec = nullptr;
  g.refused = false;
  g.count = batch.size();
  for (size_t i = 0; i < batch.size(); ++i) g.serials[i] = recorded_serial(*batch[i].recorded);
}

bool StreamDevice::capture_graph(std::span<const BatchWork> batch, BatchGraph &g) {
  g.refused = true;  // until the graph is made
  if (!capture_stream_ && calls_.stream_create(&capture_stream_, STREAM_NON_BLOCKING) != SUCCESS) {
    capture_stream_ = nullptr;
    return false;
  }
  // Relaxed: other threads' calls (another device's allocation, say) go on as if no capture ran.
  if (calls_.capture_begin(capture_stream_, STREAM_CAPTURE_MODE_RELAXED) != SUCCESS) return false;
  bool enqueued = true;
  for (const BatchWork &run : batch)
    for (const PreparedCall &call : recorded_calls(*run.recorded).calls())
      enqueued = enqueued && enqueue(calls_, capture_stream_, call) == SUCCESS;
  Graph graph = nullptr;
  bool ended = calls_.capture_end(capture_stream_, &graph) == SUCCESS && graph;  // ends it whatever came before
  GraphExec exec = nullptr;
  bool made = enqueued && ended && calls_.graph_instantiate(&exec, graph, 0) == SUCCESS && exec;
  if (graph) calls_.graph_destroy(graph);  // the executable graph keeps what it needs
  if (!made) return false;
  g.exec = exec;
  g.refused = false;
  return true;
}

void StreamDevice::destroy_graphs() noexcept {
  for (BatchGraph &g : graphs_)
    if (g.exec) calls_.graph_exec_destroy(g.exec), g.exec = nullptr;
  if (capture_stream_) calls_.stream_destroy(capture_stream_), capture_stream_ = nullptr;
}

namespace {

// Whether the batch may become a graph: the library has graphs and every run is recorded (its calls fixed,
// its record's serial names them). Copies alone too: a batch of copies seen before replays faster as a graph
// than as one cuMemcpyBatchAsync (bench/README.md, bench/cuda: the a16/b16 rows); a batch seen once still
// goes to copy_batch.
bool graph_worthy(const Calls &calls, std::span<const BatchWork> batch) {
  if (!calls.capture_begin || !calls.capture_end || !calls.graph_instantiate || !calls.graph_launch ||
      !calls.graph_exec_destroy || !calls.graph_destroy)
    return false;
  for (const BatchWork &run : batch)
    if (!run.recorded) return false;
  return true;
}

}  // namespace

rig_status StreamDevice::enqueue_run(const BatchWork &run, bool gather) {
  const Prepared *calls = &prepared_;
  if (run.recorded)
    calls = &recorded_calls(*run.recorded);
  else
    prepared_.prepare(run.work);  // the run before's calls are all enqueued or gathered by now
  for (const PreparedCall &call : calls->calls()) {
    if (gather && call.kind == RIG_PART_COPY) {
      if (!joins_copies(call))
        if (rig_status s = flush_copies(); s != RIG_OK) return s;
      size_t k = copies_.count++;
      copies_.dsts[k] = call.dst, copies_.srcs[k] = call.src, copies_.sizes[k] = call.length;
      continue;
    }
    if (rig_status s = flush_copies(); s != RIG_OK) return s;
    Result r = enqueue(calls_, stream_, call);
    if (r != SUCCESS) return fault(call_name(family_.names, call), r, true);
  }
  return RIG_OK;
}

rig_status StreamDevice::hand_over_batch(std::span<const BatchWork> batch, uint64_t first,
                                         std::span<const QueueWait> waits) {
  if (lost()) return lose("");
  // Made current at once: a batch may capture and instantiate a graph, which names no stream of rig's.
  CurrentWhenAsked current(gpu_, calls_want_current_, true);
  if (rig_status s = enqueue_waits(waits, first, current); s != RIG_OK) return s;
  // A batch seen before: its graph, made now if it is not yet, launched after the waits.
  GraphExec graph = nullptr;
  if (graph_worthy(calls_, batch)) {
    BatchGraph *g = find_graph(batch);
    if (!g)
      remember_graph(batch);
    else if (g->exec || (!g->refused && capture_graph(batch, *g)))
      graph = g->exec;
  }
  if (graph) {
    Result r = calls_.graph_launch(graph, stream_);
    if (r != SUCCESS) return fault(family_.names.graph_launch, r, true);
  }
  bool gather = calls_.copy_batch != nullptr;
  copies_.count = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!graph)  // else the graph holds every run's calls
      if (rig_status s = enqueue_run(batch[i], gather); s != RIG_OK) return s;
    // A run's value before the last: held, proved by a later mark (the stream is in order), unless the
    // timeline's run of held values is at its bound. The last value is marked, proving every one before.
    uint64_t value = first + i;
    if (i + 1 < batch.size() && timeline_->hold(value)) continue;
    if (rig_status s = flush_copies(); s != RIG_OK) return s;
    Result r = timeline_->mark(value);
    if (r != SUCCESS)
      return fault(timeline_->memory_operations() ? family_.names.write_value64 : family_.names.event_record, r, true);
  }
  return RIG_OK;
}

}  // namespace rig::stream
