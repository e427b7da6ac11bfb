// One load of a keeper's checkpoint (a version): the loader's run, and each tensor's memory as it leaves
// the process, published tensor by tensor as the load hands them over. Connections hold the version they
// attached to; a reload makes the next one, and an old one goes once its last holder lets go.
#pragma once

#include <rig_keep.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/buffer.h"
#include "core/device.h"
#include "keep/channel.h"
#include "keep/protocol.h"
#include "load/copier.h"
#include "load/file.h"
#include "load/arenas.h"
#include "load/load.h"

namespace rig::keep {

struct Publishing {
  bool writable = false;  // clients may map the tensors writable
  rig_keep_tensor_fn before_publish = nullptr;
  void *user = nullptr;
  std::function<void(const std::string &)> log;  // told how the load ended (the keeper's log)
};

class Version {
 public:
  // Opens `checkpoint`, starts loading every tensor onto every device (placement EACH) and a thread that
  // publishes them in file order. The loader's statuses for a checkpoint or device it refuses; RIG_UNSUPPORTED
  // for a device that is neither a memory device nor one whose buffers and points leave as IPC handles. Waits for the load's start (rig_load_start's waits), no lock held.
  static rig_status start(const std::string &checkpoint, const std::vector<Device *> &devices, uint64_t generation,
                          const Publishing &how, std::shared_ptr<Version> *out);
  ~Version();  // cancels what still runs and waits for its thread (a before_publish call must return)

  const Table &table() const { return table_; }
  // Tensor `index`'s reply and memfd on device position `device` once published: waits on the host (holding
  // the version's lock only while it sleeps) until then, or answers the load's failure.
  rig_status published(size_t index, size_t device, TensorReply *reply, int *fd);
  // Waits until every tensor is published, and the loader's own copy gone, or the load failed; its status.
  rig_status wait_all();
  // Cancels the load and wakes every wait of published() (which then answers RIG_INTERRUPTED for what is
  // not published). Waits for nothing.
  void cancel();

 private:
  Version() = default;
  void publish_all();
  rig_status publish(size_t index, size_t device);

  // A tensor's memory as it leaves: a memfd (memory devices), or a part of one of its device's regions (an
  // arena, or a buffer of the tensor's own) at `offset`, with IPC handles of the region and of the point
  // after which the part holds the file's bytes (CUDA, HIP), or the region's memory fd, sent once the part
  // holds them (Vulkan).
  struct Exported {
    Fd fd;                           // the memfd (kind memfd)
    int region_fd = -1;              // kind fd: its region's descriptor (the region owns it)
    uint64_t region_length = 0;      // kind fd
    std::shared_ptr<Buffer> buffer;  // keeps the memfd's mapping, or the part (and through it its region)
    uint32_t region = 0;
    uint64_t offset = 0;
    rig_ipc_handle memory{}, point{};
    uint64_t copied = 0;             // the point of the copy into the part (0: none, an empty tensor)
    bool point_exported = false;     // closed with the version (rig_point_export_ipc_close)
  };
  // What leaves a device as one IPC memory handle or one memory fd: an arena's whole allocation, or a
  // tensor's own buffer. A client imports each once (keep/attachment.cpp), not once per tensor (bench/README.md,
  // bench/keep).
  struct Region {
    std::shared_ptr<Buffer> whole;  // null until its first tensor is published
    rig_ipc_handle memory{};        // kind ipc
    Fd fd;                          // kind fd
    uint64_t length = 0;
  };
  // A device's regions: its arenas' first (by index, load/arenas.h), then the tensors made whole. Only the
  // publishing thread touches them (and the destructor, after it ended): no lock.
  struct DeviceMemory {
    std::unique_ptr<load::Arenas> arenas;
    std::vector<Region> regions;
  };
  rig_status publish_memfd(size_t index, size_t device, const Buffer &loaded, Exported *e);
  rig_status publish_part(size_t index, size_t device, const Buffer &loaded, Exported *e);
  rig_status part_for(size_t index, size_t device, std::shared_ptr<Buffer> *part, Exported *e);
  rig_status export_region(size_t device, std::shared_ptr<Allocation> whole, Region *r);
  Publishing how_;
  std::vector<Device *> devices_;
  std::vector<MemoryKind> kinds_;  // per device: how its tensors leave (memfd, IPC handles, memory fds)
  std::vector<DeviceMemory> memory_;  // per device (GPUs only)
  std::vector<std::unique_ptr<load::Copier>> copiers_;
  std::unique_ptr<load::Load> load_;  // released by the publishing thread once every tensor left it
  Table table_;
  std::vector<Exported> exported_;  // [index * devices + device]
  std::mutex mutex_;
  std::condition_variable cv_;
  size_t ready_ = 0;  // tensors [0, ready_) are published on every device
  rig_status status_ = RIG_OK;
  std::string message_;
  bool stopping_ = false;
  bool finished_ = false;  // the publishing thread is done (and the loader released)
  std::thread thread_;
};

}  // namespace rig::keep
