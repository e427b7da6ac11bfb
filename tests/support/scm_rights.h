/* A file descriptor and a size_t over a UNIX socket (SCM_RIGHTS): how the tests and examples hand a memory
 * descriptor to another process. Header-only, so an example program needs no test library. */
#ifndef RIG_SCM_RIGHTS_H
#define RIG_SCM_RIGHTS_H

#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Sends `fd` (the receiver gets its own descriptor of the same file) with `value`. 0, or -1 (errno set). */
static inline int scm_send_fd(int sock, int fd, size_t value) {
  char control[CMSG_SPACE(sizeof(int))];
  memset(control, 0, sizeof control);
  struct iovec iov = {&value, sizeof value};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(sock, &msg, 0) == (ssize_t)sizeof value ? 0 : -1;
}

/* Receives what scm_send_fd sent: the new descriptor (close-on-exec), or -1. */
static inline int scm_recv_fd(int sock, size_t *value) {
  char control[CMSG_SPACE(sizeof(int))];
  memset(control, 0, sizeof control);
  struct iovec iov = {value, sizeof *value};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof *value) return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

#endif
