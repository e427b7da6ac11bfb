#include "core/allocation.h"

#include <string>

#include "core/error.h"
#include "core/mutate.h"
#include "core/range_table.h"
#include "core/registry.h"

namespace rig {

rig_status wait_stamp(uint64_t point, Deadline deadline) {
  if (!point) return RIG_OK;
  Device *d = device_at(point_device(point));
  if (!d) return fail(RIG_NOT_FOUND, "no device has index %u", point_device(point));
  return d->wait(point_value(point), deadline);
}

Allocation::Allocation(Device &owner, const Memory &base, size_t length, bool read_only, bool owned)
    : owner_(owner), base_(base), length_(length), read_only_(read_only), owned_(owned) {}

Allocation::Allocation(Device &host, void *data, size_t length, bool read_only, rig_release_fn release,
                       void *user)
    : owner_(host), length_(length), read_only_(read_only), owned_(false), release_(release),
      release_user_(user) {
  base_.host = data;
  base_.address = reinterpret_cast<uintptr_t>(data);
  base_.length = length;
}

Allocation::Allocation(std::shared_ptr<Allocation> whole, size_t length)
    : owner_(whole->owner_), base_(whole->base_), length_(length), read_only_(whole->read_only_), owned_(false),
      whole_(std::move(whole)) {}

rig_status Allocation::wait_all_uses() {
  if (!rule_on(6)) return RIG_OK;
  rig_status result = RIG_OK;
  stamps_.for_each_use([&](uint64_t p) {
    rig_status s = wait_stamp(p, Deadline::forever());
    if (s != RIG_OK && result == RIG_OK) result = s;
  });
  return result;
}

rig_status Allocation::wait_last_write() {
  if (!rule_on(5)) return RIG_OK;
  return wait_stamp(stamps_.last_write(), Deadline::forever());
}

rig_status Allocation::memory_for(Device &device, const Memory **out) {
  if (whole_) return whole_->memory_for(device, out);  // mapped once for every part, at the whole's offsets
  if (&device == &owner_) {
    *out = &base_;
    return RIG_OK;
  }
  std::lock_guard g(lock_);
  for (auto &m : mappings_)
    if (m.device == &device) {
      *out = &m.memory;
      return RIG_OK;
    }
  Mapping mapping{&device, {}, false, {}};
  rig_status s;
  // Memory of a driver's device is reached as a peer's; the host's and memory devices' as host memory.
  if (owner_.kind() == RIG_DEVICE_GPU || owner_.kind() == RIG_DEVICE_CPU)
    s = device.driver().map_peer(owner_.driver(), base_, &mapping.memory);
  else
    s = map_host_onto(device, &mapping);
  if (s != RIG_OK) return s;
  mappings_.push_back(std::move(mapping));
  Mapping &made = mappings_.back();
  if (!made.seams.empty()) {  // pointed at only once the mapping is where it stays
    made.memory.seams = made.seams.data();
    made.memory.seam_count = made.seams.size();
  }
  *out = &made.memory;
  return RIG_OK;
}

rig_status Allocation::map_host_onto(Device &device, Mapping *out) {
  void *host = base_.host;
  // Host memory of any alignment: the table registers the enclosing pages, shared with every other wrap
  // on them, and keeps them registered until this allocation's uses are all reached (the destructor).
  out->counted = length_ > 0 && device.driver().host_registration() != nullptr;
  if (out->counted) {
    // Writable pages are registered writable even for a read-only wrap: the enclosing pages hold other
    // bytes, which copies into them (a read_into on the same page) must still be allowed to write; the
    // driver refuses those copies where the pages were registered read-only. Only pages the process
    // cannot write (a PROT_READ mapping), which the driver refuses to register writable, take the flag.
    rig_status s = range_table::acquire(device, host, length_, false, &out->seams);
    if (s == RIG_UNMAPPABLE && read_only_) s = range_table::acquire(device, host, length_, true, &out->seams);
    if (s == RIG_BUSY) {  // pages held by rig_host_register or another framework's borrow
      std::string why = last_error();  // a copy: fail() writes the buffer last_error() points into
      return fail(RIG_UNMAPPABLE, "%s cannot borrow host memory at %p: %s", device.info().name.c_str(), host,
                  why.c_str());
    }
    if (s != RIG_OK) return s;
  }
  rig_status s = device.driver().map_host(host, length_, read_only_, &out->memory);
  if (s == RIG_OK) return RIG_OK;
  std::string why = last_error();
  if (out->counted) range_table::release(device, host, length_);
  if (s != RIG_UNMAPPABLE) return fail(s, "%s", why.c_str());
  // The portable way, which every device takes: say it where a borrow cannot be made.
  return fail(s, "%s; to move host bytes without borrowing them, write them into a buffer of the device with "
              "rig_buffer_write_from and read them back with rig_buffer_read_into", why.c_str());
}

Allocation::~Allocation() {
  // Rule 6: memory goes back to a driver, or to its owner, only once no work may still use it. A use that
  // can never be reached (a lost device's) keeps the memory for the life of the process.
  if (wait_all_uses() != RIG_OK) {
    keep_forever(base_);
    // A part: its whole must outlive the process too, or the last part to go would free the memory.
    if (whole_) keep_forever(std::move(whole_));
    return;
  }
  for (auto &m : mappings_) {
    m.device->driver().unmap(m.memory);
    // A release the driver refuses leaves the pages listed in the table (never reused by another
    // registration); nothing more can be done from a destructor.
    if (m.counted) range_table::release(*m.device, base_.host, length_);
  }
  if (owned_) owner_.driver().free(base_);
  if (release_) release_(release_user_);
}

}  // namespace rig
