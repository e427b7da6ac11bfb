// An open weights file: its descriptor, what it was when opened (size, mtime, file system) and its
// tensor table.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <string>

#include "load/table.h"

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

  // RIG_OK if the file still has the size and mtime it had at open; RIG_INVALID_ARGUMENT saying how not.
  rig_status unchanged() const;
};

// Opens and parses (rig_load_open); raw ranges (rig_load_open_raw). Failures set rig's message.
rig_status open_file(const char *path, rig_load_format format, std::shared_ptr<File> *out);
rig_status open_raw(const char *path, const rig_load_range *ranges, size_t count, std::shared_ptr<File> *out);

// Reads [offset, offset+length) fully with pread (retrying short reads and EINTR); RIG_DRIVER with errno's
// words on a read error, RIG_INVALID_ARGUMENT where the file ends first (it shrank). Sets rig's message.
rig_status read_fully(int fd, uint64_t offset, void *dst, size_t length, size_t *got = nullptr);

}  // namespace rig::load
