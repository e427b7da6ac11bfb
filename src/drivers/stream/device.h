// One rig device over a GPU of a stream family (CUDA, HIP): its own stream and timeline on the GPU's context.
// Opening "cuda:0" twice gives two such devices, ordered against each other only by rig (stamps and waits).
// Everything here is the family's shared behaviour; each call into the library goes through the family's
// table (calls.h). Call names in comments are CUDA's; HIP's are the same calls under hip names.
//
// Commits: CUDA and HIP run work as soon as it is enqueued, so every value is committed at hand-over
// (DriverInfo::commits_at_hand_over), except one with no work of its own (hand_over_empty: a native
// stream's or event's point), which the timeline holds unmarked (timeline.h) until the next hand-over's mark
// proves it; commit() marks a value still held then (a wait for it commits first) and reports a loss.
// Loss: a sticky error (the context can run nothing more: illegal address, launch failure, ...) or any
// failure to enqueue handed-over work loses the device; its timeline freezes and later waits past the
// frozen value answer RIG_LOST. Work of other devices that waited on it in their queues is lost with it.
#pragma once

#include <rig.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <vector>

#include "core/driver.h"
#include "drivers/stream/calls.h"
#include "drivers/stream/gpu.h"
#include "drivers/stream/prepared.h"
#include "drivers/stream/queued_waits.h"
#include "drivers/stream/timeline.h"

namespace rig::stream {

// What Memory::handle says about memory this driver made or mapped (the engine passes it back to free()
// and unmap()).
enum class MemoryTag : uintptr_t {
  none = 0,         // length 0: nothing allocated
  device = 1,       // mem_alloc (cuMemAlloc, hipMalloc)
  pinned = 2,       // host_alloc, host-addressable and device-mapped
  host_mapping = 3, // host memory registered with host_register (map_host)
  peer_mapping = 4, // another device's memory used in place (map_peer)
  ipc_mapping = 5,  // another process's memory opened with ipc_open_memory (Memory::extra: the opened base)
  reused = 6,       // mem_alloc kept by the device's reuse pool (kMemoryDeviceReused: reuse_pool.cpp; extra: the block's length)
};

class StreamDevice final : public DriverDevice, public HostRegistration, public NativeHandles {
 public:
  // Opens a device on `gpu` with its own stream and timeline; RIG_* with a message on failure.
  // `info` is the family's description of the GPU (name, framework, model, memory, integrated); `memops`
  // picks the timeline (timeline.h), which the family decides from its environment and the device.
  static rig_status open(const Gpu &gpu, DriverInfo info, bool memops, std::unique_ptr<DriverDevice> *out);
  ~StreamDevice() override;

  // DriverDevice: memory and code (core/driver.h).
  RIG_DRIVER_DEVICE_OVERRIDES

  // The reuse pool gives back what it keeps, and keeps nothing from now on (stream/reuse_pool.cpp).
  void released() noexcept override;

  // DriverWork: parts and the timeline (core/driver_work.h).
  rig_status check_part(const Part &part) override;

  [[gnu::hot]] bool can_wait_in_queue(const DriverDevice &producer) const override;
  // The general hand-over: the work's calls prepared into storage kept across hand-overs, then enqueued as a
  // recorded hand-over's are (hand_over_prepared).
  rig_status hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) override;
  // A ready run's calls prepared once (drivers/stream/recorded.cpp); null where memory for them is short.
  std::unique_ptr<RecordedWork> record(const Work &work) override;
  // Enqueues value `value`: the in-queue `waits`, then `calls` (prepared from this device's work), then the
  // timeline's mark. Called holding the turn (hand_over's contract); a failure loses the device, and a lost
  // device enqueues nothing. Every call names the stream, so none asks what context is current unless this
  // GPU's library refused one without it (CurrentWhenAsked, stream/gpu.h). Inline (below): a recorded
  // hand-over (recorded.cpp) is this and nothing else, and a frame of its own between the two cost every
  // submit of a chain about 20 instructions of saves and restores (bench/README.md, "One frame fewer on
  // each side"); its failures are out of line (fault).
  [[gnu::always_inline]] inline rig_status hand_over_prepared(const Prepared &calls, uint64_t value,
                                                              std::span<const QueueWait> waits);
  // A batch's hand-over (drivers/stream/batch.cpp): the waits, then each run's calls and the timeline's
  // marks as hand_over_prepared enqueues them, but consecutive copies that touch no bytes another of them
  // writes go to the driver as one batch of copies (copy_batch, where the library has it), and a run's
  // value is held (Timeline::hold) where the next run's mark will prove it. Called holding the turn.
  rig_status hand_over_batch(std::span<const BatchWork> batch, uint64_t first,
                             std::span<const QueueWait> waits) override;
  // A value with no work (value_after's points): held, no driver call, where the timeline's run of held
  // values allows (Timeline::hold); else marked as an empty hand-over is.
  rig_status hand_over_empty(uint64_t value, bool *held) override;
  // Marks a held value not proved yet at the stream's tail (one record or write); a lost device answers LOST.
  rig_status commit() override;
  uint64_t signaled() const override { return timeline_->signaled(); }
  bool reached(uint64_t value) const override { return timeline_->reached(value); }
  [[gnu::hot]] bool known_reached(uint64_t value) const override { return timeline_->known_reached(value); }
  rig_status wait(uint64_t value, Deadline deadline) override;

  HostRegistration *host_registration() override { return this; }
  NativeHandles *native() override { return this; }

  // NativeHandles (core/native.h): the program's own streams and events (drivers/stream/native.cpp).
  const char *api() const override { return family_.framework; }
  void dlpack_device(int32_t *type, int32_t *id) const override;
  Memory foreign_memory(uint64_t address, size_t length) const override {
    return {nullptr, address, static_cast<uintptr_t>(MemoryTag::device), 0, length};  // as mem_alloc's
  }
  bool can_stream_wait(const DriverDevice &producer) const override { return of_family(producer) != nullptr; }
  rig_status stream_wait(void *stream, DriverDevice &producer, uint64_t value) override;
  rig_status queue_wait_stream(void *stream, uint64_t value, std::span<const QueueWait> carried) override;
  rig_status queue_wait_event(void *event, uint64_t value) override;
  rig_status export_event(uint64_t value, bool reached, void **event) override;
  // Interprocess handles (drivers/stream/ipc.cpp).
  bool can_ipc_memory() const override {
    return calls_.ipc_get_memory && calls_.ipc_open_memory && calls_.ipc_close_memory;
  }
  bool can_ipc_event() const override { return calls_.ipc_get_event && calls_.ipc_open_event; }
  rig_status export_memory_ipc(const Memory &memory, IpcBytes *handle) override;
  rig_status import_memory_ipc(const IpcBytes &handle, size_t offset, size_t length, Memory *out) override;
  rig_status export_event_ipc(uint64_t value, bool reached, void **event, IpcBytes *handle) override;
  void destroy_event(void *event) override;
  rig_status queue_wait_event_ipc(const IpcBytes &handle, uint64_t value) override;

  // HostRegistration (mapped registration's view of this driver).
  // The raw attributes: -1 where the query failed (HIP counts a failed integrated query as integrated: the
  // static table refuses such a device, not cacheable).
  int integrated() override { return attribute(family_.attributes.integrated); }
  int pageable_uses_host_page_tables() override {
    return attribute(family_.attributes.pageable_uses_host_page_tables);
  }
  // CUDA: attribute 113. HIP has the flag but no attribute saying a device honours it: the runtime answers
  // the registration itself, and mapped registration's self-test checks what it serves.
  int read_only_supported() override {
    return family_.attributes.read_only_host_register < 0 ? 1 : attribute(family_.attributes.read_only_host_register);
  }
  rig_status register_range(void *host, size_t length, bool read_only) override;
  rig_status unregister_range(void *host) override;
  rig_status alloc_pinned(size_t length, void **out) override;
  rig_status free_pinned(void *host) override;
  rig_status upload(const void *host, const Memory &device, size_t offset, size_t length) override;
  rig_status download(const Memory &device, size_t offset, void *host, size_t length) override;

  // `d` as a stream device of this device's family, or null (a CUDA stream cannot wait on a HIP event).
  // On the submit path for every in-queue wait: StreamDevice is final, so comparing the dynamic type is
  // exact and costs a load, where a dynamic_cast walks the hierarchy.
  StreamDevice *of_family(DriverDevice &d) const {
    if (typeid(d) != typeid(StreamDevice)) return nullptr;
    auto *s = static_cast<StreamDevice *>(&d);
    return &s->family_ == &family_ ? s : nullptr;
  }
  const StreamDevice *of_family(const DriverDevice &d) const {
    return of_family(const_cast<DriverDevice &>(d));
  }

  const Gpu &gpu() const { return gpu_; }
  Timeline &timeline() const { return *timeline_; }

 private:
  explicit StreamDevice(const Gpu &gpu)
      : prune_at_(kPruneAt), calls_want_current_(gpu.stream_calls_want_current.load(std::memory_order_relaxed)),
        calls_(gpu.family->calls), gpu_(gpu), family_(*gpu.family) {}

  // The device attribute, or -1 where the query fails or the family has no such attribute (-1).
  int attribute(int which) const;
  // Loses the device: freezes the timeline once (at most at `reached_cap`: values from a tainted one on
  // count as lost even where the stream ran them), then tells the engine, which owns the loss and its
  // reason. Returns RIG_LOST with the engine's reason (or `why` while another thread's report lands).
  [[gnu::cold]] rig_status lose(const char *why, uint64_t reached_cap = UINT64_MAX) noexcept;
  // A failed call (`call`: the vendor's name): loses the device where the error is sticky (or `always_lose`), else RIG_DRIVER
  // or RIG_OUT_OF_MEMORY; the message names the call and the driver's error.
  [[gnu::cold]] rig_status fault(const char *call, Result result, bool always_lose);
  // The stream's sticky error, if any (stream_query): loses the device and answers RIG_LOST.
  rig_status check_stream();
  // RIG_LOST if a device whose value this device's queue waits for was lost before reaching it. With
  // `probe`, first asks each such device that is not known lost to look for its own fault.
  rig_status check_producers(uint64_t up_to, bool probe);
  // Enqueues the in-queue `waits` of value `value` (hand_over_prepared's first step) and keeps each in
  // queued_, each call through `current` (made current where the library asks). Holding the turn; a failure
  // loses the device. Inline (below): a chain's hand-over makes one such wait an edge, and the call's frame
  // cost more than its loop; its failures are out of line (waited_on_lost, and fault).
  [[gnu::always_inline]] inline rig_status enqueue_waits(std::span<const QueueWait> waits, uint64_t value,
                                                         CurrentWhenAsked &current);
  // enqueue_waits' refusal of a wait for `value` of a producer lost short of it: loses this device with a
  // message naming the producer and the value, and answers RIG_LOST. Never blocks.
  [[gnu::cold]] rig_status waited_on_lost(const TimelineSlot &producer, uint64_t value);
  // The calls of a record this device made (StreamDevice::record), for a batch (drivers/stream/recorded.cpp).
  static const Prepared &recorded_calls(const RecordedWork &recorded);
  // A batch's copies gathered for one copy_batch (batch.cpp): at most kCopyGroup, none writing bytes
  // another touches. Used holding the turn.
  static constexpr size_t kCopyGroup = 64;
  struct CopyGroup {
    DevicePtr dsts[kCopyGroup], srcs[kCopyGroup];
    size_t sizes[kCopyGroup];
    size_t count = 0;
  };
  // A batch of recorded runs seen before, replayed as one graph launch (batch.cpp): the runs' records by
  // serial, in order; exec null until the batch is seen a second time and captured (refused: the driver
  // would not capture it, so it is handed over call by call for good). Fixed size: no allocation to
  // remember a batch. Used holding the turn.
  static constexpr size_t kGraphs = 8;
  struct BatchGraph {
    uint64_t serials[RIG_SUBMIT_MANY_MAX];
    size_t count = 0;  // 0: free
    GraphExec exec = nullptr;
    bool refused = false;
  };
  // The serial of a record this device made (recorded.cpp): never reused, so a freed record's batch is
  // never matched again.
  static uint64_t recorded_serial(const RecordedWork &recorded);
  // The graph entry of `batch` (every run recorded), or null where it is not remembered.
  BatchGraph *find_graph(std::span<const BatchWork> batch);
  // Remembers `batch` in the next entry (round robin), giving back the executable graph it held.
  void remember_graph(std::span<const BatchWork> batch);
  // Records `batch`'s calls on the capture stream and instantiates them into g.exec; false (g refused, no
  // loss: the caller hands the calls over one by one) where the driver refuses any step.
  bool capture_graph(std::span<const BatchWork> batch, BatchGraph &g);
  // Gives back every executable graph and the capture stream (the device's release).
  void destroy_graphs() noexcept;
  // Whether `call` (a copy) may join the group: room left, and neither writes bytes the other touches.
  bool joins_copies(const PreparedCall &call) const;
  // Enqueues the group (one copy_async for one copy, else one copy_batch) and empties it.
  rig_status flush_copies();
  // Enqueues a batch's run's calls (its record's, else prepared now), its copies gathered where `gather`.
  rig_status enqueue_run(const BatchWork &run, bool gather);
  // Keeps an in-queue wait of value `value` on `producer`'s value `producer_value` (queued_), pruning first
  // where prune_at_ are live. Holding the turn; no lock, no allocation. Where the ring is full of waits our
  // timeline has not passed, make_queued_room waits on the host for the middle one's value (holding the
  // turn, as a full queue blocks).
  rig_status keep_queued(TimelineSlot *producer, uint64_t producer_value, uint64_t value) {
    if (queued_.live() >= prune_at_) [[unlikely]]
      if (rig_status s = make_queued_room(value); s != RIG_OK) return s;
    queued_.push({producer, producer_value, value});
    return RIG_OK;
  }
  [[gnu::cold]] rig_status make_queued_room(uint64_t value);
  // Drops in-queue waits the timeline has passed (see hand_over).
  void prune_queued();
  // Where the family's synchronous host-to-device copy returns early (Family::copies_finish_on_legacy_stream),
  // waits for the legacy stream (see device_memory.cpp).
  rig_status finish_legacy_copy();
  // A failed call on a native handle of the program's: its words, as RIG_INVALID_ARGUMENT where the driver
  // refused the handle, RIG_LOST where the GPU's context is gone, else RIG_DRIVER. Loses nothing.
  [[gnu::cold]] rig_status native_failed(const char *call, const char *what, Result result) const;
  // A new event (`flags`: EVENT_DISABLE_TIMING, with EVENT_INTERPROCESS for another process) recorded at
  // the tail of this device's stream, or never recorded where `reached` (complete, as CUDA defines it).
  rig_status tail_event(bool reached, unsigned flags, Event *out);
  // The driver's refusal of another process's handle (ipc_open_memory, ipc_open_event): its words and
  // what usually causes it (stream/ipc.cpp).
  [[gnu::cold]] rig_status ipc_refused(const char *call, Result result) const;

  // The reuse pool (stream/reuse_pool.cpp): blocks of mem_alloc the device's frees keep for its next
  // allocations. reuse_pool_ready makes it on first use (once; false where RIG_REUSE_POOL=0). allocate_reused
  // takes a kept block `length` fits (at most an eighth to spare), else a new one, giving back what the
  // GPU's pools keep and retrying once where memory ran out; free_reused keeps the block (gives it back where
  // the device was released or lost). reclaim_for_allocation, for an allocation that ran out of memory,
  // gives back every block every pool of rig's on the GPU keeps (other devices' opened on it too): true
  // where the allocation is worth retrying. Called with the GPU's context current; none blocks holding a
  // rig lock but the GPU's reuse_lock (around mem_free).
  bool reuse_pool_ready();
  rig_status allocate_reused(size_t length, Memory *m);
  void free_reused(const Memory &memory) noexcept;
  bool reclaim_for_allocation();
  void destroy_reuse_pool() noexcept;
  // mem_alloc of `length` bytes; where memory ran out, gives back what the GPU's reuse pools keep
  // (reclaim_for_allocation) and tries once more. The driver's answer. Called with the context current.
  Result mem_alloc_or_reclaim(size_t length, DevicePtr *address);

  // One cache line (the first of this class's own): what a hand-over reads of the device, its own and a
  // producer's (bench/README.md, "What rig's own time is made of"). queued_ and prune_at_ are described
  // below, with the waits they keep.
  alignas(64) QueuedWaits queued_;
  uint32_t prune_at_;   // live entries that prune next (read and written holding the turn)
  std::atomic<bool> calls_want_current_;  // the GPU's stream_calls_want_current as this device knows it (gpu.h)
  const Calls &calls_;  // family_.calls, one load nearer on the submit path
  const Gpu &gpu_;
  Stream stream_ = nullptr;
  std::unique_ptr<Timeline> timeline_;
  // The rest.
  const Family &family_;
  // Recorded on another device's stream of this GPU (see hand_over), or on a native stream of the
  // program's (queue_wait_stream), and waited on here; used only while holding this device's turn, and a
  // wait captures the record it follows, so one event suffices.
  Event edge_event_ = nullptr;
  int limits_[8] = {};  // block x/y/z, grid x/y/z, threads per block, shared bytes

  // The general hand-over's calls, reused by every hand-over (called holding the turn): no allocation per
  // submit once it has grown to the largest work.
  Prepared prepared_;
  CopyGroup copies_;
  BatchGraph graphs_[kGraphs];
  size_t next_graph_ = 0;
  Stream capture_stream_ = nullptr;  // made at the first capture: rig's stream is never captured (another
                                     // device's hand-over may record an event on it meanwhile)
  std::atomic<uint64_t> next_serial_{1};
  bool copy_batch_refused_ = false;  // the driver refused a batch's attributes: one call per copy from then

  // queued_ (in the first line, above): in-queue waits on other devices not yet known to be safe
  // (queued_waits.h), written holding the turn, read by any thread; pruned as our timeline passes them, once
  // prune_at_ of them are live (kPruneAt at first).
  static constexpr size_t kPruneAt = 64;

  // The reuse pool: made once (reuse_once_), null where there is none (RIG_REUSE_POOL=0).
  std::once_flag reuse_once_;
  std::unique_ptr<KeptBlocks> reuse_;
};

rig_status StreamDevice::enqueue_waits(std::span<const QueueWait> waits, uint64_t value, CurrentWhenAsked &current) {
  for (const QueueWait &w : waits) {
    // A producer can_wait_in_queue said yes to (DriverWork::hand_over's contract): a stream device of this
    // family. Not asked again: of_family reads the producer's type and family, two lines a driver call
    // pushed out, on every edge.
    StreamDevice *p = static_cast<StreamDevice *>(w.producer);
    TimelineSlot *ps = p->timeline_->slot();
    if (ps->lost.load(std::memory_order_acquire) && ps->frozen.load(std::memory_order_relaxed) < w.value) [[unlikely]]
      return waited_on_lost(*ps, w.value);
    // Kept before the wait is enqueued (a failed call loses the device, so an entry for a wait never
    // enqueued changes nothing).
    if (rig_status s = keep_queued(ps, w.value, value); s != RIG_OK) return s;
    Result r;
    const char *call;
    if (&p->gpu_ == &gpu_ && p->timeline_->memory_operations()) [[unlikely]] {
      // Same GPU: a dependency CUDA sees. Streams of one GPU may share a hardware queue (more streams than
      // connections), where a stream waiting on a value written later in that queue would deadlock;
      // CUDA's documentation asks for such orders to be expressed with events. The event is recorded at
      // the producer's tail, which covers w.value (committed, not yet reached): over-waiting at worst,
      // never a cycle (everything before the tail was handed over before this wait).
      call = family_.names.event_record;
      r = current.call([&] { return calls_.event_record(edge_event_, p->stream_); });
      if (r == SUCCESS) {
        call = family_.names.stream_wait_event;
        r = current.call([&] { return calls_.stream_wait_event(stream_, edge_event_, 0); });
      }
    } else {
      r = current.call([&] { return p->timeline_->enqueue_wait(stream_, timeline_->memory_operations(), w.value); });
      // The call's name for the failure's message, named only where it failed.
      call = r == SUCCESS                                                                   ? nullptr
             : timeline_->memory_operations() && p->timeline_->memory_operations() ? family_.names.wait_value64
                                                                                    : family_.names.stream_wait_event;
    }
    if (r != SUCCESS) [[unlikely]]
      return fault(call, r, true);
  }
  return RIG_OK;
}

rig_status StreamDevice::hand_over_prepared(const Prepared &calls, uint64_t value,
                                            std::span<const QueueWait> waits) {
  // No loss check: the engine asked holding the turn just before (DriverWork::hand_over), and every caller
  // here is such a hand-over or asks itself (hand_over_empty).
  CurrentWhenAsked current(gpu_, calls_want_current_);  // every call below names the stream: no context query
  if (rig_status s = enqueue_waits(waits, value, current); s != RIG_OK) return s;
  for (const PreparedCall &call : calls.calls()) {
    Result r = current.call([&] { return enqueue(calls_, stream_, call); });
    if (r != SUCCESS) [[unlikely]]
      return fault(call_name(family_.names, call), r, true);
  }
  Result r = current.call([&] { return timeline_->mark(value); });
  if (r != SUCCESS) [[unlikely]]
    return fault(timeline_->memory_operations() ? family_.names.write_value64 : family_.names.event_record, r, true);
  return RIG_OK;
}

}  // namespace rig::stream
