/* Fork (rig.h, Fork): a child forked while a parent thread holds a device's turn, inside rig_submit on a run,
 * does not block; every device it inherits answers RIG_LOST ("inherited across fork") at once; the run that
 * parent thread was submitting is the child's to release (no other thread holds it there); devices it opens
 * work. The child's checks run in the child, which reports by exit status; an alarm kills a child that
 * blocks. */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rigtest.h"
#include "test_driver.h"

typedef struct {
  rig_run run;
  rig_status status;
} filler;

static void *fill_blocked(void *arg) {
  filler *f = arg;
  f->status = rig_submit(f->run, NULL, 0, NULL);
  return NULL;
}

/* The child's checks: each failure is a line on stderr and a nonzero exit. */
static int child_checks(rig_device a, rig_device m, rig_buffer on_m, rig_buffer on_m2, rig_run run) {
  int bad = 0;
#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) fprintf(stderr, "child: failed: %s\n", #cond), ++bad; \
  } while (0)
  rig_status s = rt_try_copy(a, on_m, on_m2, NULL, 0, NULL); /* a's turn is held by a parent thread */
  EXPECT(s == RIG_LOST || s == RIG_INVALID_ARGUMENT); /* M's buffers are not A's: refused or lost */
  const char *why = NULL;
  EXPECT(rig_device_lost_reason(a, &why) == RIG_OK && why && strcmp(why, "inherited across fork") == 0);
  EXPECT(rig_device_wait(a, 1, UINT64_MAX) == RIG_LOST); /* reached in the parent: not the child's */
  EXPECT(strstr(rig_last_error(), "inherited across fork") != NULL);
  uint64_t v = 1;
  EXPECT(rig_device_signaled(a, &v) == RIG_OK && v == 0);
  rig_buffer x;
  EXPECT(rig_buffer_create(m, 64, RIG_MEMORY_DEVICE, &x) == RIG_LOST); /* no new memory on a lost device */
  EXPECT(rt_try_copy(m, on_m, on_m2, NULL, 0, NULL) == RIG_LOST);
  uint8_t byte = 0;
  EXPECT(rig_buffer_read_into(on_m, 0, &byte, 1) == RIG_LOST); /* written last by M in the parent */
  /* A device the child opens works, under the same name. */
  rig_device c;
  EXPECT(rig_memory_device("M", &c) == RIG_OK);
  rig_buffer y, z;
  EXPECT(rig_buffer_create(c, 64, RIG_MEMORY_DEVICE, &y) == RIG_OK);
  EXPECT(rig_buffer_create(c, 64, RIG_MEMORY_DEVICE, &z) == RIG_OK);
  EXPECT(rig_buffer_write_from(y, 0, "\x07", 1) == RIG_OK);
  EXPECT(rt_try_copy(c, y, z, NULL, 0, NULL) == RIG_OK);
  EXPECT(rig_buffer_read_into(z, 0, &byte, 1) == RIG_OK && byte == 7);
  /* The run a parent thread was inside rig_submit with: that thread is not in the child, so neither is its
   * hold on the run (a submit there is not RIG_BUSY, and the release does not wait for it forever). */
  EXPECT(rig_submit(run, NULL, 0, NULL) == RIG_LOST);
  EXPECT(rig_run_release(run) == RIG_OK);
  EXPECT(rig_device_release(a) == RIG_OK); /* at once: lost */
  EXPECT(rig_device_release(c) == RIG_OK);
#undef EXPECT
  return bad;
}

static void a_child_forked_while_a_turn_is_held_loses_inherited_devices_and_opens_new_ones(void **state) {
  (void)state;
  rig_device a, m;
  OK(tdrv_open("A", &a));
  OK(rig_memory_device("M", &m));
  rig_buffer x = rt_create(a, 64), x2 = rt_create(a, 64), on_m = rt_create(m, 64), on_m2 = rt_create(m, 64);
  rt_fill(a, x, 1);
  assert_int_equal(tdrv_step(a, 1), 1);
  rt_fill(m, on_m, 2);
  /* A parent thread takes A's turn and blocks in the driver's hand-over. */
  tdrv_set_block_hand_over(a, 1);
  filler f = {rt_copy_run(a, x, x2), RIG_DRIVER};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, fill_blocked, &f), 0);
  while (!tdrv_in_hand_over(a)) usleep(100);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    alarm(10); /* a child that blocks dies of SIGALRM, which the parent reports */
    _exit(child_checks(a, m, on_m, on_m2, f.run) ? 1 : 0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status)) fail_msg("the child died of signal %d (SIGALRM: it blocked)", WTERMSIG(status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  /* The parent is untouched: its devices work on. */
  tdrv_set_block_hand_over(a, 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  OK(f.status);
  const char *why = "";
  OK(rig_device_lost_reason(a, &why));
  assert_null(why);
  OK(rig_device_wait(a, 2, UINT64_MAX));
  OK(rig_run_release(f.run));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(x2));
  OK(rig_buffer_release(on_m));
  OK(rig_buffer_release(on_m2));
  OK(rig_device_release(a));
  OK(rig_device_release(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_child_forked_while_a_turn_is_held_loses_inherited_devices_and_opens_new_ones),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
