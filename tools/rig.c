/* The rig command: `rig devices` lists what it can open; `rig demo` runs the seed page's program;
 * `rig probe FILE` answers whether a GPU can copy straight from the file's registered mapping. */
#include <rig.h>

#include "probe.h"
#include "load.h"

#include <stdio.h>
#include <string.h>

static int check(rig_status s, const char *what) {
  if (s == RIG_OK) return 0;
  fprintf(stderr, "rig: %s: %s: %s\n", what, rig_status_name(s), rig_last_error());
  return 1;
}

static int devices(void) {
  rig_device a;
  if (check(rig_memory_device("memory", &a), "memory device")) return 1;
  printf("%-12s %-8s %s\n", "NAME", "FRAMEWORK", "MODEL");
  printf("%-12s %-8s %s\n", "memory:NAME", "memory", "host memory, work runs inline (any number, by name)");
  rig_device_release(a);
  const char *names[256];
  size_t n = 0;
  if (check(rig_device_list(names, 256, &n), "device list")) return 1;
  for (size_t i = 0; i < n && i < 256; ++i) {
    rig_device d;
    if (rig_device_open(names[i], &d) != RIG_OK) {
      printf("%-12s (cannot open: %s)\n", names[i], rig_last_error());
      continue;
    }
    rig_device_info info = {sizeof info};
    rig_device_get_info(d, &info);
    /* A driver device says whether it shares the host's memory (mapped registration's verdicts depend on it). */
    int driver_device = info.kind == RIG_DEVICE_GPU || info.kind == RIG_DEVICE_CPU;
    const char *integration = !driver_device          ? ""
                              : info.integrated == 1 ? ", integrated"
                              : info.integrated == 0 ? ", discrete"
                                                     : ", integration unknown";
    printf("%-12s %-8s %s, %llu MiB%s%s\n", names[i], info.framework, info.model,
           (unsigned long long)(info.memory_bytes >> 20), integration, info.kind == RIG_DEVICE_CPU ? ", CPU" : "");
    rig_device_release(d);
  }
  return 0;
}

/* The seed's program: x on A gets src through a borrow; y on B gets x through a borrow. */
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

static int demo(void) {
  char text[] = "hello, world";
  char out[13] = {0};
  rig_device a, b;
  rig_buffer src, x, y, src_on_a, x_on_b;
  if (check(rig_memory_device("A", &a), "A") || check(rig_memory_device("B", &b), "B")) return 1;
  if (check(rig_buffer_wrap(text, 12, RIG_ACCESS_READ, NULL, NULL, &src), "wrap") ||
      check(rig_buffer_create(a, 12, RIG_MEMORY_DEVICE, &x), "x") ||
      check(rig_buffer_create(b, 12, RIG_MEMORY_DEVICE, &y), "y") ||
      check(rig_buffer_borrow(a, src, &src_on_a), "borrow src") || copy_on(a, src_on_a, x) ||
      check(rig_buffer_borrow(b, x, &x_on_b), "borrow x") || copy_on(b, x_on_b, y) ||
      check(rig_buffer_read_into(y, 0, out, 12), "read"))
    return 1;
  puts(out);
  rig_buffer bufs[] = {src, x, y, src_on_a, x_on_b};
  for (size_t i = 0; i < 5; ++i) rig_buffer_release(bufs[i]);
  rig_device_release(a);
  rig_device_release(b);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "devices") == 0) return devices();
  if (argc >= 2 && strcmp(argv[1], "demo") == 0) return demo();
  if (argc >= 2 && strcmp(argv[1], "probe") == 0) return rig_tool_probe(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "load") == 0) return rig_load_command(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "version") == 0) return puts(rig_version_string()) < 0;
  fprintf(stderr, "usage: rig devices | demo | probe FILE [--device NAME] [--offset N --length N] [--json] [--deadline S] | load FILE --device NAME[,NAME] [...] | version\n");
  return 2;
}
