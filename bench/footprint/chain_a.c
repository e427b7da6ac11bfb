/* bench/cuda's row (a) alone, for footprint.py: 4 KiB copies alternating between two rig devices of one GPU,
 * each reading the other's last write (the cross-device edge), submitted with no host wait. First it
 * prints where librig's code is mapped, where its stack is and where rig_submit starts, so the trace can be cut into submits
 * and each access put to rig or not. Usage: chain_a OPS (the device: $DEV, else cuda:0). With $KERNELS (the path
 * of tests/cuda/kernels.ptx) the chain is bench/cuda's kernel row instead: rig_add_u32 adding 1 to x in place,
 * the devices alternating. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <rig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/add_part.h"

#define CK(x)                                                            \
  do {                                                                   \
    if ((x) != RIG_OK) {                                                 \
      fprintf(stderr, "%s: %s\n", #x, rig_last_error());                 \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

/* Prints "footprint: WHAT <the mapping>" for the executable mapping of the library named `lib`. */
static void say_code(const char *lib, const char *what) {
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[512];
  while (maps && fgets(line, sizeof line, maps))
    if (strstr(line, lib) && strstr(line, "r-xp")) fprintf(stderr, "footprint: %s %s", what, line);
  if (maps) fclose(maps);
}

int main(int argc, char **argv) {
  int ops = argc > 1 ? atoi(argv[1]) : 1000;
  char here[8]; /* an address on the main thread's stack */
  say_code("librig", "code");
  fprintf(stderr, "footprint: stack %p\n", (void *)here); /* the main thread's stack: below this, 8 MiB */
  const char *name = getenv("DEV") ? getenv("DEV") : "cuda:0";
  rig_device dev[2];
  CK(rig_device_open(name, &dev[0]));
  CK(rig_device_open(name, &dev[1]));
  /* The driver's code, loaded by the first open: its entries cut a submit into the stretches between calls. */
  say_code("libfakecuda", "driver");
  /* Last: footprint.py reads the lines above once it sees this one. */
  fprintf(stderr, "footprint: rig_submit %p\n", dlsym(RTLD_DEFAULT, "rig_submit"));
  rig_buffer x[2], y[2];
  CK(rig_buffer_create(dev[0], 4096, RIG_MEMORY_DEVICE, &x[0]));
  CK(rig_buffer_create(dev[0], 4096, RIG_MEMORY_DEVICE, &y[0]));
  CK(rig_buffer_borrow(dev[1], x[0], &x[1]));
  CK(rig_buffer_borrow(dev[1], y[0], &y[1]));
  rig_run xy[2], yx[2];
  for (int d = 0; d < 2; ++d) {
    rig_part copy = {0};
    copy.size = sizeof copy;
    copy.kind = RIG_PART_COPY;
    copy.src_slot = 0;
    copy.dst_slot = 1;
    copy.length = RIG_WHOLE;
    rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
    rig_submission sub;
    CK(rig_submission_make(dev[d], &copy, 1, access, 2, &sub));
    CK(rig_run_take(sub, &xy[d]));
    CK(rig_run_set_buffer(xy[d], 0, x[d]));
    CK(rig_run_set_buffer(xy[d], 1, y[d]));
    CK(rig_run_take(sub, &yx[d]));
    CK(rig_run_set_buffer(yx[d], 0, y[d]));
    CK(rig_run_set_buffer(yx[d], 1, x[d]));
  }
  rig_run step[2];
  const char *ptx_path = getenv("KERNELS");
  for (int d = 0; ptx_path && d < 2; ++d) {
    static char ptx[1 << 16];
    FILE *f = fopen(ptx_path, "r");
    size_t n = f ? fread(ptx, 1, sizeof ptx - 1, f) : 0;
    if (f) fclose(f);
    if (!n) {
      fprintf(stderr, "KERNELS=%s: no PTX read\n", ptx_path);
      return 1;
    }
    ptx[n] = 0;
    rig_module module;
    CK(rig_module_load(dev[d], RIG_MODULE_PTX, ptx, n, &module));
    rig_part launch = bench_add_part(module, 1024);
    rig_access rw[1] = {RIG_ACCESS_READ_WRITE};
    rig_submission sub;
    CK(rig_submission_make(dev[d], &launch, 1, rw, 1, &sub));
    CK(rig_run_take(sub, &step[d]));
    CK(rig_run_set_buffer(step[d], 0, x[d]));
    uint32_t scalars[2] = {1024, 1};
    CK(rig_run_set_scalars(step[d], scalars, sizeof scalars));
  }
  rig_point last = 0;
  for (int i = 0; i < ops; ++i)
    CK(rig_submit(ptx_path ? step[i % 2] : i % 2 ? yx[i % 2] : xy[i % 2], NULL, 0, &last));
  CK(rig_wait_point(last, UINT64_MAX));
  return 0;
}
