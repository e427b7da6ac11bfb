// The descriptor plumbing every import of a file descriptor shares (memory fds, semaphore fds, sync files):
// the caller's descriptor is checked and duplicated, the driver imports the duplicate, and the caller's
// stays the caller's whatever happens.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "interop/operations.h"

namespace rig::interop {

rig_status duplicate_for_driver(int fd, const char *call, const char *what, int *mine) {
  // Checked here, not left to the driver: a closed descriptor is undefined behaviour in Vulkan.
  if (fd < 0 || fcntl(fd, F_GETFD) < 0)
    return fail(RIG_INVALID_ARGUMENT, "%s: descriptor %d is not open in this process", call, fd);
  // A pipe or a socket is never memory or a semaphore, and a driver may block reading one (lavapipe does).
  struct stat st {};
  if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
    return fail(RIG_INVALID_ARGUMENT, "%s: descriptor %d is a %s, not %s", call, fd,
                S_ISFIFO(st.st_mode) ? "pipe" : "socket", what);
  // The driver gets a duplicate: a successful import owns it (Vulkan's rule), and the caller's descriptor
  // stays the caller's either way.
  *mine = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (*mine < 0) return fail(RIG_DRIVER, "%s: duplicating descriptor %d failed: %s", call, fd, std::strerror(errno));
  return RIG_OK;
}

void drop_refused(int mine) {
  // A driver that kept to the rule left a refused descriptor open (lavapipe closes refused memory fds).
  if (fcntl(mine, F_GETFD) >= 0) close(mine);
}

}  // namespace rig::interop
