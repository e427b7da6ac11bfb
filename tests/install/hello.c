/* The seed's hello-world ordering program in C, as a program outside the tree builds it: only
 * `pkg-config --cflags --libs rig` and <rig.h> from the install. Exits non-zero unless it printed the
 * bytes. (tests/install/install_test.sh builds and runs it against a DESTDIR install.) */
#include <rig.h>
#include <stdio.h>
#include <string.h>

#define TRY(call)                                                                                  \
  do {                                                                                             \
    rig_status s_ = (call);                                                                        \
    if (s_ != RIG_OK) {                                                                            \
      fprintf(stderr, "%s: %s: %s\n", #call, rig_status_name(s_), rig_last_error());               \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

/* Copies slot 0 into slot 1 on `device`. */
static int copy(rig_device device, rig_buffer src, rig_buffer dst) {
  rig_part part;
  memset(&part, 0, sizeof part);
  part.size = sizeof part;
  part.kind = RIG_PART_COPY;
  part.src_slot = 0;
  part.dst_slot = 1;
  part.length = RIG_WHOLE;
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_submission sub;
  rig_run run;
  TRY(rig_submission_make(device, &part, 1, access, 2, &sub));
  TRY(rig_run_take(sub, &run));
  TRY(rig_run_set_buffer(run, 0, src));
  TRY(rig_run_set_buffer(run, 1, dst));
  TRY(rig_submit(run, NULL, 0, NULL));
  TRY(rig_run_release(run));
  TRY(rig_submission_release(sub));
  return 0;
}

int main(void) {
  static char text[] = "hello, world";
  rig_device a, b;
  rig_buffer src, src_on_a, x, x_on_b, y;
  TRY(rig_memory_device("A", &a));
  TRY(rig_memory_device("B", &b));
  TRY(rig_buffer_wrap(text, 12, RIG_ACCESS_READ, NULL, NULL, &src));
  TRY(rig_buffer_create(a, 12, RIG_MEMORY_DEVICE, &x));
  TRY(rig_buffer_create(b, 12, RIG_MEMORY_DEVICE, &y));
  TRY(rig_buffer_borrow(a, src, &src_on_a));
  TRY(rig_buffer_borrow(b, x, &x_on_b));
  if (copy(a, src_on_a, x) || copy(b, x_on_b, y)) return 1;
  char out[13] = {0};
  TRY(rig_buffer_read_into(y, 0, out, 12));
  printf("%s (librig %s)\n", out, rig_version_string());
  rig_buffer bufs[] = {src, src_on_a, x, x_on_b, y};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i) TRY(rig_buffer_release(bufs[i]));
  TRY(rig_device_release(a));
  TRY(rig_device_release(b));
  return strcmp(out, "hello, world") == 0 ? 0 : 1;
}
