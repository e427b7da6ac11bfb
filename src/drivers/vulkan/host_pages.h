// What the host memory under a borrow is made of, read from the process's mappings (/proc/self/maps):
// Vulkan imports only memory that is the process's own: anonymous memory (heap, stack, anonymous mmap)
// and private writable mappings of files (a program's globals, copy-on-write). A shared or read-only file
// mapping is the mapped-registration spec's kernel hazard (a device holding the file's own pages, which
// the kernel writes back), which Vulkan's static verdict refuses (docs/mapped.md): refused by name.
#pragma once

#include <cstddef>
#include <string>

namespace rig::vulkan {

// Why [host, host+length) cannot be imported, or "" where every byte of it lies in such mappings, which the
// process may read (and write, unless read_only). On "", pages of private file mappings in the range have
// been written once with their own value (atomically), so they are copies of the process's. Reads
// /proc/self/maps: call at the borrow, never on the submit path. Takes no lock of rig's.
std::string host_pages_refusal(const void *host, size_t length, bool read_only);

}  // namespace rig::vulkan
