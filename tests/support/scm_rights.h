/* A file descriptor and a size_t over a UNIX socket (SCM_RIGHTS): how the tests and examples hand a memory
 * descriptor to another process. Header-only, so an example program needs no test library. */
#ifndef RIG_SCM_RIGHTS_H
#define RIG_SCM_RIGHTS_H

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/* A message of one size_t (`iov`) with room for one descriptor (`control`, zeroed). */
typedef struct scm_message {
  struct msghdr msg;
  struct iovec iov;
  char control[CMSG_SPACE(sizeof(int))];
} scm_message;

static inline void scm_prepare(scm_message *m, size_t *value) {
  memset(m, 0, sizeof *m);
  m->iov.iov_base = value;
  m->iov.iov_len = sizeof *value;
  m->msg.msg_iov = &m->iov;
  m->msg.msg_iovlen = 1;
  m->msg.msg_control = m->control;
  m->msg.msg_controllen = sizeof m->control;
}

/* Sends `fd` (the receiver gets its own descriptor of the same file) with `value`. 0, or -1 (errno set). */
static inline int scm_send_fd(int sock, int fd, size_t value) {
  scm_message m;
  scm_prepare(&m, &value);
  struct msghdr msg = m.msg;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(sock, &msg, 0) == (ssize_t)sizeof value ? 0 : -1;
}

/* Receives what scm_send_fd sent: the new descriptor (close-on-exec), or -1. */
static inline int scm_recv_fd(int sock, size_t *value) {
  scm_message m;
  scm_prepare(&m, value);
  struct msghdr msg = m.msg;
  if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof *value) return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

/* Starts this program again as a peer: fork, then exec /proc/self/exe as `name peer [role] FD`, FD being the
 * peer's end of a new UNIX socket pair (kept across exec). Returns the child's pid, or -1 (errno set);
 * *sock is the caller's end (close-on-exec). */
static inline pid_t scm_spawn_peer(const char *name, const char *role, int *sock) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    int fd = dup(sv[1]); /* without close-on-exec: the peer's end */
    char arg[16];
    snprintf(arg, sizeof arg, "%d", fd);
    if (role)
      execl("/proc/self/exe", name, "peer", role, arg, (char *)NULL);
    else
      execl("/proc/self/exe", name, "peer", arg, (char *)NULL);
    _exit(127);
  }
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return -1;
  }
  *sock = sv[0];
  return pid;
}

#endif
