// Opening a weights file: only a regular file, and without blocking on anything else. A FIFO's open waits
// for a writer and its reads for data, a device node's reads never end (/dev/zero) or block (a terminal):
// none of them is a file of weights, and the loader must answer before it waits on one.
#pragma once

#include <sys/stat.h>

#include <rig.h>

namespace rig::load {

// Opens `path` read-only and fills *st where it names a regular file (symbolic links followed); refuses a
// directory, FIFO, socket or device node with RIG_INVALID_ARGUMENT naming what it is, RIG_NOT_FOUND where
// nothing is there. Opens with O_NONBLOCK and checks the open descriptor (fstat), so neither the open nor
// the check waits on what it refuses and no other file can take the name's place in between; O_NONBLOCK
// is cleared before the descriptor is handed out. Never blocks on a FIFO or a device. Sets rig's message.
rig_status open_regular_file(const char *path, int *fd, struct stat *st);

}  // namespace rig::load
