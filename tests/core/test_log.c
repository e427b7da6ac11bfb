/* rig_set_log: every diagnostic goes to the callback a program names (here RIG_LOAD_TRACE=1's milestones,
 * set by meson), filtered by its level; a null callback restores stderr; a bad level changes nothing; the
 * sink may be switched while loads on other threads are saying things. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rig_load.h>

#include "rigtest.h"
#include "weights.h"

static const size_t lengths[] = {5000, 70000, 1};
#define COUNT (sizeof lengths / sizeof lengths[0])

/* What one callback saw. */
struct heard {
  atomic_int lines, bad, planned, done;
  atomic_int below; /* a message below the level asked for */
  rig_log_level min;
};

static void hear(void *user, rig_log_level level, const char *message) {
  struct heard *h = user;
  atomic_fetch_add(&h->lines, 1);
  if (level < h->min) atomic_fetch_add(&h->below, 1);
  if (strncmp(message, "rig load trace: ", 16) != 0 || strchr(message, '\n') || level != RIG_LOG_DEBUG)
    atomic_fetch_add(&h->bad, 1);
  if (strstr(message, "ms  planned")) atomic_fetch_add(&h->planned, 1);
  if (strstr(message, "ms  done")) atomic_fetch_add(&h->done, 1);
}

static const char *weights(void) {
  static const char *path;
  if (!path) {
    path = tw_path("log");
    tw_safetensors_u8(path, lengths, COUNT);
  }
  return path;
}

/* One whole staged load of every tensor onto a memory device: start, wait, release. */
static void load_once(rig_device d) {
  rig_load_file f;
  OK(rig_load_open(weights(), RIG_LOAD_FORMAT_AUTO, &f));
  rig_load_options o = tw_options(RIG_LOAD_PATH_STAGED, 64 << 10, 2);
  rig_load_placement p = tw_placement(&d, 1, RIG_LOAD_RULE_EACH, NULL);
  rig_load load;
  OK(rig_load_start(f, NULL, 0, &p, &o, &load));
  OK(rig_load_wait(load));
  OK(rig_load_release(load));
  OK(rig_load_file_release(f));
}

static rig_device device(void) {
  rig_device d;
  OK(rig_memory_device("log", &d));
  return d;
}

/* The lines a load says on stderr while `fn` (null: the default) is the sink, read back from a file. */
static char *stderr_of_a_load(void) {
  char path[] = "/tmp/rig-log-stderr.XXXXXX";
  int file = mkstemp(path);
  assert_true(file >= 0);
  unlink(path);
  fflush(stderr);
  int saved = dup(2);
  assert_true(saved >= 0 && dup2(file, 2) == 2);
  load_once(device());
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  off_t n = lseek(file, 0, SEEK_END);
  char *text = calloc(1, (size_t)n + 1);
  assert_true(text && pread(file, text, (size_t)n, 0) == n);
  close(file);
  return text;
}

static void a_callback_hears_every_milestone_of_a_traced_load(void **state) {
  (void)state;
  struct heard h = {.min = RIG_LOG_DEBUG};
  OK(rig_set_log(hear, &h, RIG_LOG_DEBUG));
  char *err = stderr_of_a_load();
  OK(rig_set_log(NULL, NULL, RIG_LOG_DEBUG));
  assert_int_equal(atomic_load(&h.planned), 1);
  assert_int_equal(atomic_load(&h.done), 1);
  assert_true(atomic_load(&h.lines) >= 8); /* planned, staging made, running, firsts, all submitted, done */
  assert_int_equal(atomic_load(&h.bad), 0);
  assert_null(strstr(err, "rig load trace")); /* nothing of it on stderr */
  free(err);
}

static void a_level_above_the_messages_drops_them(void **state) {
  (void)state;
  struct heard h = {.min = RIG_LOG_WARNING};
  OK(rig_set_log(hear, &h, RIG_LOG_WARNING));
  char *err = stderr_of_a_load();
  OK(rig_set_log(NULL, NULL, RIG_LOG_DEBUG));
  assert_int_equal(atomic_load(&h.lines), 0);
  assert_null(strstr(err, "rig load trace"));
  free(err);
}

static void a_null_callback_restores_stderr(void **state) {
  (void)state;
  struct heard h = {.min = RIG_LOG_DEBUG};
  OK(rig_set_log(hear, &h, RIG_LOG_DEBUG));
  OK(rig_set_log(NULL, NULL, RIG_LOG_DEBUG));
  char *err = stderr_of_a_load();
  assert_int_equal(atomic_load(&h.lines), 0);
  assert_non_null(strstr(err, "rig load trace: "));
  assert_non_null(strstr(err, "ms  planned\n"));
  assert_non_null(strstr(err, "ms  done\n"));
  free(err);
  /* the default filtered by a level: nothing of DEBUG on stderr */
  OK(rig_set_log(NULL, NULL, RIG_LOG_ERROR));
  err = stderr_of_a_load();
  OK(rig_set_log(NULL, NULL, RIG_LOG_DEBUG));
  assert_string_equal(err, "");
  free(err);
}

static void a_bad_level_is_refused_and_changes_nothing(void **state) {
  (void)state;
  struct heard h = {.min = RIG_LOG_DEBUG};
  OK(rig_set_log(hear, &h, RIG_LOG_DEBUG));
  STATUS(RIG_INVALID_ARGUMENT, rig_set_log(NULL, NULL, (rig_log_level)4));
  assert_non_null(strstr(rig_last_error(), "set_log: level 4"));
  STATUS(RIG_INVALID_ARGUMENT, rig_set_log(NULL, NULL, (rig_log_level)-1));
  STATUS(RIG_INVALID_ARGUMENT, rig_set_log(NULL, NULL, RIG_LOG_LEVEL_MAX_ENUM));
  load_once(device());
  OK(rig_set_log(NULL, NULL, RIG_LOG_DEBUG));
  assert_int_equal(atomic_load(&h.planned), 1); /* still the callback's */
}

enum { THREADS = 3, LOADS = 20, SWITCHES = 2000 };

static void *loader(void *arg) {
  rig_device d = arg;
  for (int i = 0; i < LOADS; ++i) load_once(d);
  return NULL;
}

static void switching_the_sink_under_loads_loses_no_line(void **state) {
  (void)state;
  /* how many lines one such load says */
  struct heard one = {.min = RIG_LOG_DEBUG};
  OK(rig_set_log(hear, &one, RIG_LOG_DEBUG));
  load_once(device());
  const int per_load = atomic_load(&one.lines);
  struct heard a = {.min = RIG_LOG_DEBUG}, b = {.min = RIG_LOG_DEBUG};
  OK(rig_set_log(hear, &a, RIG_LOG_DEBUG));
  pthread_t t[THREADS];
  rig_device d = device();
  for (int i = 0; i < THREADS; ++i) assert_int_equal(pthread_create(&t[i], NULL, loader, d), 0);
  for (int i = 0; i < SWITCHES; ++i) OK(rig_set_log(hear, i % 2 ? &a : &b, RIG_LOG_DEBUG));
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  OK(rig_set_log(NULL, NULL, RIG_LOG_DEBUG));
  assert_int_equal(atomic_load(&a.lines) + atomic_load(&b.lines), THREADS * LOADS * per_load);
  assert_int_equal(atomic_load(&a.bad) + atomic_load(&b.bad), 0);
  assert_int_equal(atomic_load(&a.planned) + atomic_load(&b.planned), THREADS * LOADS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_callback_hears_every_milestone_of_a_traced_load),
      cmocka_unit_test(a_level_above_the_messages_drops_them),
      cmocka_unit_test(a_null_callback_restores_stderr),
      cmocka_unit_test(a_bad_level_is_refused_and_changes_nothing),
      cmocka_unit_test(switching_the_sink_under_loads_loses_no_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
