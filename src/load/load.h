// One load: a selection of a file's tensors, placed on devices, read and copied by core's submits on threads
// of its own. Each tensor gets its own allocation per device (a part of one of a few arenas: stamps of its
// own, load/arenas.h), so its stamps carry only the copies into it. It speaks core only (devices, buffers,
// runs as the engine holds them); the C face (load.cpp in src/capi) resolves handles before and mints them after.
#pragma once

#include <rig_load.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "load/arenas.h"
#include "load/copier.h"
#include "load/file.h"
#include "load/path.h"
#include "load/plan.h"
#include "load/pool.h"
#include "load/trace.h"

namespace rig::load {

// A part of a selected tensor (the whole, or one device's slice) as the load moves it.
struct LoadTensor : Placed {
  LoadTensor(Placed placed, size_t position) : Placed(std::move(placed)), position(position), remaining(length) {}
  size_t position;  // in the load's parts (its arenas' index)
  std::vector<std::shared_ptr<Buffer>> buffers;  // per placement position (null where not placed)
  std::atomic<uint64_t> remaining;  // bytes not yet submitted to the primary device
  std::mutex make_mutex;         // guards making the primary buffer
  bool ready = false;            // every copy submitted (and verified): may be handed out
};

class Load {
 public:
  ~Load();
  // Checks everything, places the tensors, decides the path, makes the staging, starts the run thread.
  // `devices`: the placement's devices (1..64, resolved by the C face; `placement.devices` is not read);
  // `host`: the host device, which wraps the file's mappings and the staging's memory; `pools`: the
  // options' pools, resolved by the C face, kept until the load ends. Waits for a probe, the staging's
  // first piece and the driver's registrations, holding no lock. Sets rig's message on failure.
  static rig_status start(Device &host, std::shared_ptr<File> file, const size_t *tensors, size_t count,
                          std::vector<Device *> devices, const rig_load_placement &placement,
                          const rig_load_options &options, std::vector<std::shared_ptr<StagingPool>> pools,
                          std::unique_ptr<Load> *out);
  // A view of the part (the whole tensor, or its slice) of file index `index` on placement position
  // `device`, once its copies are submitted: waits for that (or the load's failure), holding the load's
  // lock only while it waits on it.
  rig_status buffer(size_t index, size_t device, std::shared_ptr<Buffer> *out);
  // Which part of tensor `index` placement position `device` holds (rig_load_slice_get). Pure read of the
  // plan, fixed at start; waits for nothing.
  rig_status slice(size_t index, size_t device, rig_load_slice *out);
  // Waits for the load's end; its status and message.
  rig_status wait();
  // Fills *out whole (out->size ours; the C face serves the caller's size) once the load ended; RIG_BUSY
  // while it runs. Under the load's lock, which no wait holds.
  rig_status stats(rig_load_stats *out);
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }

 private:
  Load() = default;
  // Start's paragraphs: the devices and the caller's pools; the selection placed and its arenas laid out;
  // chunks and staging (staged) or windows (registered, direct); one copier per device.
  rig_status take_devices(std::vector<Device *> devices);
  rig_status place_selection(const size_t *selected, size_t count, const rig_load_placement &placement);
  uint32_t readers() const;  // the staged path's reader threads, as options ask
  rig_status plan_staged(const std::vector<PlanTensor> &plan, uint64_t lo, uint64_t hi);
  void plan_windows(const std::vector<PlanTensor> &plan);
  rig_status make_copiers();
  void run();
  void run_paths();
  // Runs a part of the load's threads' work: an exception from core's calls (out of host memory) fails the
  // load, which stops every thread, instead of leaving the thread.
  template <class F>
  void guarded(F &&body) noexcept {
    try {
      body();
    } catch (const std::bad_alloc &) {
      fail_with(fail(RIG_OUT_OF_MEMORY, "the load: out of host memory"));
    } catch (const std::exception &e) {
      fail_with(fail(RIG_DRIVER, "the load: %s", e.what()));
    } catch (...) {
      fail_with(fail(RIG_DRIVER, "the load: unexpected failure"));
    }
  }
  // The staged path's two roles: readers claim chunks in file order with a staging chunk each and fill
  // them; one copier (the run thread) submits the filled chunks' copies in file order.
  void read_worker();
  void copy_worker();
  void give_back_unsubmitted();
  void run_windows();
  void run_kept();
  // The copies of one chunk from `src` (a staging chunk or a window borrowed by the chunk's device), added
  // to the copiers' batches (load/copier.h); the tensors whose last copy is among them go to `done`, to be
  // handed out by settle once their copies are submitted. `src` stays alive in the batch until then.
  rig_status copy_chunk(const Chunk &chunk, const Buffer &src, const unsigned char *host_bytes,
                        std::vector<LoadTensor *> *done);
  // Submits every copier's batch, then finishes the tensors in `done` (finish_tensor) and empties it.
  rig_status settle(std::vector<LoadTensor *> *done);
  rig_status flush_copies();
  // One copy submitted now (a peer copy of a finished tensor).
  rig_status copy(size_t device, const Buffer &src, uint64_t src_offset, const Buffer &dst, uint64_t dst_offset,
                  uint64_t length);
  rig_status make_buffer(LoadTensor &t, size_t position);
  // The part of file index `index` placed on `device`; RIG_INVALID_ARGUMENT where there is none.
  rig_status part_of(size_t index, size_t device, LoadTensor **out);
  rig_status finish_tensor(LoadTensor &t);
  rig_status verify(LoadTensor &t, size_t position, uint64_t offset, uint64_t length, const unsigned char *reference);
  // Reads a staging chunk: pread through the page cache, or `reader` on its shard's O_DIRECT descriptor.
  rig_status read_chunk(const Chunk &c, void *dst, class DirectRead *reader);
  bool stopping(rig_status *why);
  void fail_with(rig_status s);
  void progress(uint64_t bytes);

  std::shared_ptr<File> file_;
  rig_load_options options_{};
  Device *host_ = nullptr;  // devices live until the process exits (core/registry.h)
  std::vector<Device *> devices_;
  std::vector<std::unique_ptr<Copier>> copiers_;  // per device; used by the run thread only
  std::vector<std::unique_ptr<LoadTensor>> tensors_;
  std::vector<size_t> by_file_index_;    // file index -> its first part's position + 1 (0: not selected)
  std::vector<Chunk> chunks_;
  Route route_;  // the path, whether it reads the kept registration, and why (load/path.h)
  std::vector<int> direct_fds_;  // per shard, O_DIRECT descriptors; empty for buffered reads
  uint64_t align_ = 1;
  std::vector<std::unique_ptr<StagingPool>> own_pools_;
  std::vector<StagingPool *> pools_;      // per device (staged path)
  std::vector<std::shared_ptr<StagingPool>> given_pools_;  // the caller's, kept alive while the load runs
  // Per device, the caller's pool among given_pools_, or null. A device with one is loaded again: the
  // staged path stages through it, and its tensors come from the device's reuse pool (make_buffer).
  std::vector<StagingPool *> given_;
  std::vector<std::unique_ptr<Arenas>> arenas_;  // per device: its tensors' arenas (reuse pool memory where given_)
  // Staged: claims are taken in chunk order holding claim_mutex_, each with its staging chunk, so the
  // copier's next chunk always has one (a later chunk can never hold the last free slot it waits for).
  std::mutex claim_mutex_;
  size_t next_chunk_ = 0;
  // Per chunk: its staging slot + 1 once filled (0: not yet, or already submitted), and its bytes' address.
  std::unique_ptr<std::atomic<uint32_t>[]> filled_;
  std::vector<void *> filled_host_;
  std::mutex fill_mutex_;  // the copier sleeps on fill_cv_ only after spinning a while
  std::condition_variable fill_cv_;
  std::atomic<bool> halted_{false};  // the load failed or was cancelled: every thread stops
  std::atomic<bool> cancelled_{false};
  std::atomic<uint64_t> bytes_read_{0}, bytes_copied_{0};
  uint64_t bytes_total_ = 0;
  uint64_t t0_ns_ = 0;
  Trace trace_;  // RIG_LOAD_TRACE=1: the milestones on stderr (load/trace.h)
  double first_tensor_s_ = -1, seconds_ = 0;
  size_t staging_used_ = 0;
  // Where the threads' time goes (rig_load_stats' phases), nanoseconds summed over threads.
  enum Phase { READ, STAGING_WAIT, ALLOC, SUBMIT, PHASES };
  std::atomic<uint64_t> phase_ns_[PHASES] = {};
  // Adds the time from its making to its end to one phase.
  struct Timed {
    explicit Timed(std::atomic<uint64_t> &to);
    ~Timed();
    std::atomic<uint64_t> &to;
    uint64_t t0;
  };

  std::mutex mutex_;  // guards status_, message_, done_, ready flags
  std::condition_variable cv_;
  rig_status status_ = RIG_OK;
  std::string message_;
  bool done_ = false;
  std::mutex progress_mutex_;  // one progress callback at a time; guards bytes_done_
  uint64_t bytes_done_ = 0;
  std::thread thread_;
};

}  // namespace rig::load
