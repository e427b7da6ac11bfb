// Memory a memory device's tensor leaves the keeper in: a sealed memfd, mapped on both sides. A memory
// device borrows any host memory (interop's foreign memory), so the driver needs nothing new: each side
// makes an allocation of its memory device over its own mapping of the same pages.
#pragma once

#include <rig.h>

#include <memory>

#include "core/buffer.h"
#include "core/device.h"
#include "keep/channel.h"

namespace rig::keep {

// A new memfd of `length` bytes (sealed against shrinking and growing, so no holder's mapping can ever
// fault; sealed against new writable mappings unless `writable`), mapped here, and a buffer of memory
// device `device` over the mapping (unmapped once the last buffer over it is released and every use is
// reached). RIG_OUT_OF_MEMORY or RIG_DRIVER with errno's words. Waits for nothing.
rig_status make_shared_memory(Device &device, size_t length, bool writable, Fd *fd, std::shared_ptr<Buffer> *out);

// A buffer of memory device `device` over a received memfd's first `length` bytes, mapped read-only unless
// `writable` (then rig refuses any write of it: the allocation is read-only). Checks what a hostile sender
// could do first: RIG_INVALID_ARGUMENT for a descriptor that is no memfd sealed against shrinking (a file
// that shrinks would fault the mapping) or is shorter than `length`. `fd` stays the caller's.
rig_status map_shared_memory(Device &device, int fd, size_t length, bool writable, std::shared_ptr<Buffer> *out);

}  // namespace rig::keep
