// A file's read-only mapping that a shrinking file cannot turn into a signal. A page of a MAP_SHARED
// mapping past the file's end raises SIGBUS when read, so a file truncated while a device copies from its
// mapping (the direct path's memcpy on a memory device, a double of a GPU driver reading host memory)
// would kill the process. Under the guard such a read reads zeros, and the load that copied them fails
// at its next check of the file (File::unchanged: the size moved), naming the file.
//
// How: one SIGBUS handler for the process, installed with a guarded mapping and chained to the handler it
// replaced (a user's handler keeps every signal that is not a guarded mapping's). For a fault
// inside a guarded mapping it maps a zeroed private page over the faulting one and returns, so the read
// goes on; nothing unwinds, so the copy's locks and the engine's state stay as they were. A handler the
// program installs later replaces rig's (sigaction's rule): then a shrinking file's read is the program's
// signal again; where SIGBUS is back at its default, or at the handler rig replaced, the next guarded
// mapping puts rig's back. Reads a GPU's DMA makes of pinned pages never fault on the CPU: docs/load.md says what then.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rig::load {

// Maps [0, length) of `fd` PROT_READ, MAP_SHARED, guarded. MAP_FAILED with errno set where mmap fails, or
// ENOMEM where more guarded mappings than the guard has room for (4096) are open at once. Thread-safe;
// blocks only on the guard's own lock, briefly, while another thread installs the handler.
void *map_guarded(int fd, size_t length);

// True where a read of the mapping at `base` found a page missing (and read zeros there): *offset is the
// first such byte's offset in the file. A load asks once the copies that read the mapping are reached: a
// missing page is a shrunk file or a read the disk failed, and either way the bytes copied are not the
// file's. Never blocks.
bool guarded_fault(void *base, uint64_t *offset);

// Stops guarding and unmaps a mapping of map_guarded. Only once no device reads it any more (rule 6: the
// last wrap's release). Never blocks.
void unmap_guarded(void *base, size_t length);

}  // namespace rig::load
