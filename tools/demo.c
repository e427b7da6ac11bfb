/* `rig demo`: the seed page's program. x on memory device A gets src through a borrow; y on B gets x
 * through a borrow; reading y waits for B's copy, which followed A's (the order came from the memory). */
#include "cli.h"
#include "commands.h"

#include <getopt.h>
#include <stdio.h>

static int check(rig_status s, const char *what) {
  if (s == RIG_OK) return 0;
  fprintf(stderr, "rig demo: %s: %s: %s\n", what, rig_status_name(s), rig_last_error());
  return 1;
}

static int copy_on(rig_device d, rig_buffer src, rig_buffer dst) {
  rig_part copy = {sizeof copy};
  copy.kind = RIG_PART_COPY;
  copy.src_slot = 0;
  copy.dst_slot = 1;
  copy.length = RIG_WHOLE;
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_submission sub;
  rig_run run;
  if (check(rig_submission_make(d, &copy, 1, access, 2, &sub), "submission")) return 1;
  int bad = check(rig_run_take(sub, &run), "take") || check(rig_run_set_buffer(run, 0, src), "slot 0") ||
            check(rig_run_set_buffer(run, 1, dst), "slot 1") || check(rig_submit(run, NULL, 0, NULL), "submit");
  rig_run_release(run);
  rig_submission_release(sub);
  return bad;
}

int rig_tool_demo(int argc, char **argv) {
  static const struct option options[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
    if (c != 'h') return rig_tool_bad_option("demo", c, argv);
    printf("usage: rig demo\n"
           "  Runs the seed page's program on memory devices A and B (a borrow, two copies) and prints\n"
           "  hello, world.\n");
    return RIG_EXIT_OK;
  }
  if (optind < argc) {
    fprintf(stderr, "rig demo: unexpected argument %s\n", argv[optind]);
    return RIG_EXIT_USAGE;
  }
  char text[] = "hello, world";
  char out[13] = {0};
  rig_device a, b;
  rig_buffer src, x, y, src_on_a, x_on_b;
  if (check(rig_memory_device("A", &a), "A") || check(rig_memory_device("B", &b), "B")) return RIG_EXIT_ERROR;
  if (check(rig_buffer_wrap(text, 12, RIG_ACCESS_READ, NULL, NULL, &src), "wrap") ||
      check(rig_buffer_create(a, 12, RIG_MEMORY_DEVICE, &x), "x") ||
      check(rig_buffer_create(b, 12, RIG_MEMORY_DEVICE, &y), "y") ||
      check(rig_buffer_borrow(a, src, &src_on_a), "borrow src") || copy_on(a, src_on_a, x) ||
      check(rig_buffer_borrow(b, x, &x_on_b), "borrow x") || copy_on(b, x_on_b, y) ||
      check(rig_buffer_read_into(y, 0, out, 12), "read"))
    return RIG_EXIT_ERROR;
  puts(out);
  rig_buffer bufs[] = {src, x, y, src_on_a, x_on_b};
  for (size_t i = 0; i < 5; ++i) rig_buffer_release(bufs[i]);
  rig_device_release(a);
  rig_device_release(b);
  return RIG_EXIT_OK;
}
