#include "keep_test.h"

#include <rig.h>
#include <rig_load.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

uint64_t kt_offset(const char *path, size_t i) {
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  assert_int_equal(rig_load_tensor_get(f, i, &t), RIG_OK);
  assert_int_equal(rig_load_file_release(f), RIG_OK);
  return t.offset;
}

pid_t kt_child = -1;

int kt_kill_child(void **state) {
  (void)state;
  if (kt_child > 0) {
    kill(kt_child, SIGKILL);
    waitpid(kt_child, NULL, 0);
  }
  kt_child = -1;
  return 0;
}

char kt_read_byte(int fd) {
  char c = 0;
  while (read(fd, &c, 1) < 0 && errno == EINTR) {
  }
  return c;
}
