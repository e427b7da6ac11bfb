// The attaching side: one connection to a keeper, its table, and the tensors it sent as buffers of this
// process's device. Tensors arrive in the order the keeper publishes them; a get reads messages only up to
// the one it needs, so it waits for that tensor alone.
#pragma once

#include <rig_keep.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/device.h"
#include "keep/channel.h"
#include "keep/protocol.h"

namespace rig::keep {

class Attachment {
 public:
  // Connects, reads the table, attaches every tensor of the keeper's first device of `device`'s kind
  // (rig_attach's contract).
  static rig_status attach(const std::string &socket_path, Device &device, std::unique_ptr<Attachment> *out);
  ~Attachment();  // says goodbye and closes

  const Table &table() const { return table_; }
  // Tensor `index`'s buffer, receiving until it is in (rig_attachment_get's contract); *writable says
  // whether the keeper lets it be written.
  rig_status get(size_t index, std::shared_ptr<Buffer> *out, bool *writable);
  // Whether tensor `index` was received writable (false before it arrives). Pure read under the lock.
  bool writable(size_t index);

 private:
  Attachment() = default;
  // Receives one message and stores what it brings. Called holding mutex_.
  rig_status receive_one();
  // RIG_LOST (with the message) once the keeper closed its end. Called holding mutex_.
  rig_status check_keeper();
  // A tensor of kind ipc or fd as a part of its region (`fd`: the descriptor beside a kind fd message), the
  // region imported once (attachment.cpp). Called holding mutex_.
  rig_status import_region(const TensorReply &t, int fd, bool writable, std::shared_ptr<Allocation> *out);
  rig_status import_part(const TensorReply &t, int fd, bool writable, std::shared_ptr<Buffer> *out);

  Fd socket_;
  Device *device_ = nullptr;  // devices live until the process exits (core/registry.h)
  uint32_t position_ = 0;     // the keeper's device this attachment takes its tensors from
  Table table_;
  std::mutex mutex_;  // guards what follows and the socket's reads
  std::vector<std::shared_ptr<Buffer>> received_;
  std::vector<bool> writable_;
  // The keeper's regions (keep/version.h) imported so far, by the index its messages name them by.
  struct Region {
    std::shared_ptr<Allocation> whole;  // what the tensors are parts of (read-only unless writable)
    bool writable = false;
  };
  std::map<uint32_t, Region> regions_;
  rig_status failed_ = RIG_OK;  // the keeper's error or its loss, answered ever after
  std::string message_;
};

}  // namespace rig::keep
