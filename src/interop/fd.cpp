// A point as a host file descriptor: an eventfd made readable once the point is settled (reached, or never
// to be reached). rig writes through a duplicate of its own, so the caller may close its descriptor at any
// time without rig ever writing to a number the process has since reused.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

#include "core/allocation.h"
#include "core/error.h"
#include "interop/operations.h"

namespace rig::interop {
namespace {

void signal(int fd) {
  uint64_t one = 1;
  while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

// Waits until the point is settled: rig_interrupt_waits interrupts waits, not this thread's purpose, so an
// interrupted wait is tried again a slice later.
void settle(uint64_t point) {
  while (wait_stamp(point, Deadline::forever()) == RIG_INTERRUPTED)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

rig_status point_fd(uint64_t point, int *fd) {
  Device *d = nullptr;
  if (point)
    if (rig_status s = resolve(point, "point_fd", &d); s != RIG_OK) return s;
  int efd = eventfd(0, EFD_CLOEXEC);
  if (efd < 0) return fail(RIG_DRIVER, "point_fd: eventfd failed: %s", std::strerror(errno));
  if (!d || d->reached(point_value(point))) {
    signal(efd);
    *fd = efd;
    return RIG_OK;
  }
  int mine = fcntl(efd, F_DUPFD_CLOEXEC, 0);
  if (mine < 0) {
    int e = errno;
    close(efd);
    return fail(RIG_DRIVER, "point_fd: duplicating the eventfd failed: %s", std::strerror(e));
  }
  try {
    std::thread([mine, point] {
      settle(point);
      signal(mine);
      close(mine);
    }).detach();
  } catch (const std::system_error &e) {
    close(mine);
    close(efd);
    return fail(RIG_DRIVER, "point_fd: starting the waiting thread failed: %s", e.what());
  }
  *fd = efd;
  return RIG_OK;
}

}  // namespace rig::interop
