// An open checkpoint: its files (one, or the shards of a sharded safetensors checkpoint or a split GGUF
// set), what each was when opened (size, mtime, file system), and one tensor table over them all.
#pragma once

#include <sys/stat.h>

#include <rig.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "load/table.h"

namespace rig {
class Device;
struct Buffer;
}  // namespace rig

namespace rig::load {

// One file of a checkpoint. Its bytes sit in the load's stream at `base` (a multiple of shard_align, so
// chunks and windows aligned in the stream are aligned in the file): a load plans, stages and copies one
// stream over every shard, and a chunk never spans two (load/plan.h).
constexpr uint64_t shard_align = uint64_t(1) << 20;
struct Shard {
  int fd = -1;
  std::string path;
  uint64_t size = 0;
  struct timespec mtime {};
  uint64_t file_system = 0;  // st_dev: the probe cache's key
  uint64_t base = 0;         // where its bytes start in the stream
  Shard() = default;
  Shard(const Shard &) = delete;
  Shard &operator=(const Shard &) = delete;
  ~Shard();
  // RIG_OK if the file still has the size and mtime it had at open; RIG_INVALID_ARGUMENT saying how not.
  rig_status unchanged() const;
};

struct File {
  std::string path;  // as opened: a file, an index, a directory
  rig_load_format format = RIG_LOAD_FORMAT_AUTO;
  std::vector<std::unique_ptr<Shard>> shards;  // one for a single file; never empty once opened
  std::vector<TensorEntry> tensors;             // offsets in the stream; `shard` says whose
  Metadata metadata;
  // The shard holding stream offset `at` (the last whose base is at or before it). Pure; waits for nothing.
  const Shard &shard_at(uint64_t at) const;
  // Reads stream bytes [at, at+length), which lie in one shard, as read_fully does (its statuses, the
  // shard's path in the words). Waits for the reads; holds no lock.
  rig_status read(uint64_t at, void *dst, size_t length) const;
  ~File();

  // Registrations kept across loads (rig_load_file_keep_registered): the whole file mapped read-only
  // (guarded), wrapped, and borrowed by one device, whose driver registered it once. Released with the File (the
  // last of the handle and the loads that hold it), after the copies that read them (rule 6).
  struct Kept {
    std::string device;                // the device's name: devices opened twice under one name share it
    std::vector<std::shared_ptr<Buffer>> borrowed;  // per shard, the wrap of its mapping borrowed by the device
    std::vector<void *> bases;  // per shard, its guarded mapping (load/guarded_mapping.h), for the fault check
  };
  // The kept registration of `shard` on `device`, or null. Under kept_mutex, briefly.
  std::shared_ptr<Buffer> kept_on(const Device &device, size_t shard = 0);
  // Maps, wraps (on `host`, the host device) and borrows every shard whole on `device` once (a second call for
  // the same device does nothing). Waits for the driver's registration holding kept_mutex. Sets rig's
  // message on failure.
  rig_status keep_on(Device &device, Device &host);
  // RIG_OK unless a read of a kept mapping on `device` found a page missing (the shard shrank, or the read
  // failed: it read zeros, load/guarded_mapping.h); then RIG_INVALID_ARGUMENT naming the shard. Ask once
  // the copies that read the registration are reached. Under kept_mutex, briefly; waits for nothing else.
  rig_status kept_intact(const Device &device);

  // RIG_OK if every shard still has the size and mtime it had at open; RIG_INVALID_ARGUMENT naming the one
  // that changed.
  rig_status unchanged() const;

 private:
  std::mutex kept_mutex_;
  std::vector<Kept> kept_;
};

// Raw ranges (rig_load_open_raw); a checkpoint's files are opened by load/checkpoint.h. Failures set rig's
// message.
// Opens one file of a checkpoint and parses its header (`format` AUTO: by its magic). A FIFO or device node
// is refused before anything waits on it. Waits for the reads; holds no lock. Sets rig's message.
rig_status open_shard(const std::string &path, rig_load_format format, std::unique_ptr<Shard> *shard,
                      ParseResult *parsed, rig_load_format *found);
rig_status open_raw(const char *path, const rig_load_range *ranges, size_t count, std::shared_ptr<File> *out);

// Reads [offset, offset+length) fully with pread (retrying short reads and EINTR); RIG_DRIVER with errno's
// words on a read error, RIG_INVALID_ARGUMENT where the file ends first (it shrank). Sets rig's message.
rig_status read_fully(int fd, uint64_t offset, void *dst, size_t length, size_t *got = nullptr);

}  // namespace rig::load
