// An open weights file: its descriptor, what it was when opened (size, mtime, file system) and its
// tensor table.
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

struct File {
  int fd = -1;
  std::string path;
  rig_load_format format = RIG_LOAD_FORMAT_AUTO;
  uint64_t size = 0;
  struct timespec mtime {};
  uint64_t file_system = 0;  // st_dev: the probe cache's key
  std::vector<TensorEntry> tensors;
  ~File();

  // Registrations kept across loads (rig_load_file_keep_registered): the whole file mapped read-only,
  // wrapped, and borrowed by one device, whose driver registered it once. Released with the File (the
  // last of the handle and the loads that hold it), after the copies that read them (rule 6).
  struct Kept {
    std::string device;                // the device's name: devices opened twice under one name share it
    std::shared_ptr<Buffer> borrowed;  // the wrap of the mapping borrowed by the device: the registration
  };
  // The kept registration on `device`, or null. Under kept_mutex, briefly.
  std::shared_ptr<Buffer> kept_on(const Device &device);
  // Maps, wraps (on `host`, the host device) and borrows the whole file on `device` once (a second call for
  // the same device does nothing). Waits for the driver's registration holding kept_mutex. Sets rig's
  // message on failure.
  rig_status keep_on(Device &device, Device &host);

  // RIG_OK if the file still has the size and mtime it had at open; RIG_INVALID_ARGUMENT saying how not.
  rig_status unchanged() const;

 private:
  std::mutex kept_mutex_;
  std::vector<Kept> kept_;
};

// Opens and parses (rig_load_open); raw ranges (rig_load_open_raw). Failures set rig's message.
rig_status open_file(const char *path, rig_load_format format, std::shared_ptr<File> *out);
rig_status open_raw(const char *path, const rig_load_range *ranges, size_t count, std::shared_ptr<File> *out);

// Reads [offset, offset+length) fully with pread (retrying short reads and EINTR); RIG_DRIVER with errno's
// words on a read error, RIG_INVALID_ARGUMENT where the file ends first (it shrank). Sets rig's message.
rig_status read_fully(int fd, uint64_t offset, void *dst, size_t length, size_t *got = nullptr);

}  // namespace rig::load
