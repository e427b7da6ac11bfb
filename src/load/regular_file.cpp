#include "load/regular_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace rig::load {
namespace {

// What a file that is not a regular one is, in the words a user knows it by.
const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

rig_status open_regular_file(const char *path, int *fd, struct stat *st) {
  if (!path || !*path) return fail(RIG_INVALID_ARGUMENT, "no path");
  // O_NONBLOCK: a FIFO opens at once (no writer waited for); O_NOCTTY: a terminal never becomes ours.
  int f = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (f < 0) {
    int e = errno;
    struct stat named;
    // A UNIX socket cannot be opened at all (ENXIO): say what it is rather than errno's words.
    if (e == ENXIO && stat(path, &named) == 0 && !S_ISREG(named.st_mode))
      return fail(RIG_INVALID_ARGUMENT, "%s is %s, not a regular file: rig loads weights from files", path,
                  kind_of(named.st_mode));
    return fail(e == ENOENT ? RIG_NOT_FOUND : RIG_INVALID_ARGUMENT, "open %s: %s", path, strerror(e));
  }
  if (fstat(f, st) != 0) {
    int e = errno;
    ::close(f);
    return fail(RIG_DRIVER, "fstat %s: %s", path, strerror(e));
  }
  if (!S_ISREG(st->st_mode)) {
    ::close(f);
    return fail(RIG_INVALID_ARGUMENT, "%s is %s, not a regular file: rig loads weights from files", path,
                kind_of(st->st_mode));
  }
  // A regular file's reads never block on O_NONBLOCK's account, but the descriptor goes to readers
  // (O_DIRECT reopens, io_uring) that should see the file's ordinary flags.
  int flags = fcntl(f, F_GETFL);
  if (flags < 0 || fcntl(f, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    int e = errno;
    ::close(f);
    return fail(RIG_DRIVER, "fcntl %s: %s", path, strerror(e));
  }
  *fd = f;
  return RIG_OK;
}

}  // namespace rig::load
