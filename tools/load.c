/* The `rig load` subcommand (tools/load.h). Devices are "cuda:0", "vulkan:0", ..., or "memory:NAME" for a
 * memory device. A progress bar goes to stderr only when it is a terminal. */
#define _GNU_SOURCE
#include "load.h"

#include <rig.h>
#include <rig_load.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES 16

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Resident set size in bytes (VmRSS of /proc/self/status), 0 where unreadable. */
static unsigned long long rss_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  unsigned long long kb = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %llu kB", &kb) == 1) break;
  fclose(f);
  return kb * 1024;
}

struct bar {
  double t0;
  double last;
};

static void show_progress(void *user, uint64_t done, uint64_t total) {
  struct bar *b = user;
  double t = now_s();
  if (t - b->last < 0.1 && done < total) return;
  b->last = t;
  double rate = (t - b->t0) > 0 ? (double)done / (t - b->t0) : 0;
  double left = rate > 0 ? (double)(total - done) / rate : 0;
  int width = 30, filled = total ? (int)((double)width * (double)done / (double)total) : width;
  fprintf(stderr, "\r[%.*s%*s] %.2f/%.2f GB %.2f GB/s %.1f s left ", filled, "##############################",
          width - filled, "", (double)done / 1e9, (double)total / 1e9, rate / 1e9, left);
  if (done >= total) fputc('\n', stderr);
}

static int usage(void) {
  fprintf(stderr,
          "usage: rig load FILE --device NAME[,NAME...] [--path auto|staged|registered|direct]\n"
          "                [--io auto|buffered|direct] [--rule each|layer] [--verify] [--json]\n"
          "                [--threads N] [--chunk-mib N] [--staging-mib N] [--window-mib N] [--repeat N]\n"
          "  NAME: cuda:0, hip:0, vulkan:0 or memory:NAME. --repeat loads N times in this process through\n"
          "  one staging pool per device (a later load pays no pinned allocation).\n");
  return 2;
}

static int pick(const char *word, const char *const *names, int count) {
  for (int i = 0; i < count; ++i)
    if (strcmp(word, names[i]) == 0) return i;
  return -1;
}

int rig_load_command(int argc, char **argv) {
  const char *path = NULL, *device_list = NULL;
  int json = 0, repeat = 1;
  rig_load_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  rig_load_placement p;
  memset(&p, 0, sizeof p);
  p.size = sizeof p;
  p.rule = RIG_LOAD_RULE_EACH;
  static const char *const paths[] = {"auto", "staged", "registered", "direct"};
  static const char *const ios[] = {"auto", "buffered", "direct"};
  static const char *const rules[] = {"each", "layer"};
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int k;
    if (strcmp(a, "--json") == 0) json = 1;
    else if (strcmp(a, "--verify") == 0) o.verify = 1;
    else if (!v && a[0] == '-') return usage();
    else if (strcmp(a, "--device") == 0) device_list = v, ++i;
    else if (strcmp(a, "--path") == 0) { if ((k = pick(v, paths, 4)) < 0) return usage(); o.path = (rig_load_path)k; ++i; }
    else if (strcmp(a, "--io") == 0) { if ((k = pick(v, ios, 3)) < 0) return usage(); o.io = (rig_load_io)k; ++i; }
    else if (strcmp(a, "--rule") == 0) { if ((k = pick(v, rules, 2)) < 0) return usage(); p.rule = (rig_load_rule)k; ++i; }
    else if (strcmp(a, "--threads") == 0) o.threads = (uint32_t)atoi(v), ++i;
    else if (strcmp(a, "--chunk-mib") == 0) o.chunk_bytes = (size_t)atoll(v) << 20, ++i;
    else if (strcmp(a, "--staging-mib") == 0) o.staging_bytes = (size_t)atoll(v) << 20, ++i;
    else if (strcmp(a, "--window-mib") == 0) o.window_bytes = (size_t)atoll(v) << 20, ++i;
    else if (strcmp(a, "--repeat") == 0) repeat = atoi(v), ++i;
    else if (a[0] != '-' && !path) path = a;
    else return usage();
  }
  if (!path || !device_list || repeat < 1) return usage();

  rig_device devices[MAX_DEVICES];
  size_t n = 0;
  char names[1024];
  snprintf(names, sizeof names, "%s", device_list);
  int rc = 1;
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    rig_status s = n >= MAX_DEVICES ? RIG_INVALID_ARGUMENT
                   : strncmp(name, "memory:", 7) == 0 ? rig_memory_device(name + 7, &devices[n])
                                                      : rig_device_open(name, &devices[n]);
    if (s != RIG_OK) {
      fprintf(stderr, "rig load: device %s: %s: %s\n", name, rig_status_name(s), rig_last_error());
      goto out;
    }
    ++n;
  }
  p.devices = devices;
  p.device_count = n;

  rig_load_file file;
  rig_status s = rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &file);
  if (s != RIG_OK) {
    fprintf(stderr, "rig load: %s: %s: %s\n", path, rig_status_name(s), rig_last_error());
    goto out;
  }
  size_t tensors = 0;
  rig_load_tensor_count(file, &tensors);

  /* One pool per device, kept across the repeats (made only for the staged path's sake; the load skips
   * it on the others). Its making is timed as part of the first load. */
  rig_load_pool pools[MAX_DEVICES];
  size_t pool_count = 0;
  struct bar bar = {now_s(), 0};
  if (isatty(2)) {
    o.progress = show_progress;
    o.progress_user = &bar;
  }
  if (json) printf("{\"file\": \"%s\", \"tensors\": %zu, \"loads\": [", path, tensors);
  for (int r = 0; r < repeat; ++r) {
    unsigned long long rss0 = rss_bytes();
    double t0 = now_s();
    bar.t0 = t0;
    if (repeat > 1 && r == 0 && o.path != RIG_LOAD_PATH_REGISTERED && o.path != RIG_LOAD_PATH_DIRECT) {
      size_t chunk = o.chunk_bytes ? o.chunk_bytes : (size_t)8 << 20;
      size_t budget = (o.staging_bytes ? o.staging_bytes : (size_t)256 << 20) / n;
      uint64_t total = 0; /* no more pinned memory than the file's tensors need */
      for (size_t t = 0; t < tensors; ++t) {
        rig_load_tensor info;
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        if (rig_load_tensor_get(file, t, &info) == RIG_OK) total += info.length;
      }
      if (budget > total + 2 * (chunk + 4096)) budget = (size_t)total + 2 * (chunk + 4096);
      for (size_t d = 0; d < n; ++d) {
        s = rig_load_pool_create(devices[d], budget, chunk + 4096, &pools[d]);
        if (s != RIG_OK) {
          fprintf(stderr, "rig load: staging pool: %s: %s\n", rig_status_name(s), rig_last_error());
          goto close;
        }
        pool_count = d + 1;
      }
      o.pools = pools;
      o.pool_count = pool_count;
    }
    rig_load load;
    s = rig_load_start(file, NULL, 0, &p, &o, &load);
    if (s == RIG_OK) s = rig_load_wait(load);
    /* End to end: until every device finished the copies (the stamps would order later work anyway). */
    for (size_t d = 0; s == RIG_OK && d < n; ++d) {
      uint64_t v = 0;
      rig_device_submitted(devices[d], &v);
      if (v) s = rig_device_wait(devices[d], v, UINT64_MAX);
    }
    double t1 = now_s();
    if (s != RIG_OK) {
      fprintf(stderr, "rig load: %s: %s: %s\n", path, rig_status_name(s), rig_last_error());
      if (json) printf("]}\n");
      goto close;
    }
    rig_load_stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    rig_load_get_stats(load, &st);
    unsigned long long rss1 = rss_bytes();
    double gbs = (double)st.bytes_total / (t1 - t0) / 1e9;
    if (json) {
      printf("%s{\"path\": \"%s\", \"why\": \"", r ? ", " : "", rig_load_path_name(st.path));
      for (const char *c = st.why; *c; ++c) printf(*c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
      printf("\", \"direct_io\": %d, \"bytes\": %llu, \"bytes_read\": %llu, \"bytes_copied\": %llu, \"seconds\": %.6f, "
             "\"gb_per_s\": %.3f, \"first_tensor_seconds\": %.6f, \"staging_bytes\": %zu, \"rss_growth_bytes\": %lld, "
             "\"verified\": %d}",
             st.direct_io, (unsigned long long)st.bytes_total, (unsigned long long)st.bytes_read,
             (unsigned long long)st.bytes_copied, t1 - t0, gbs, st.first_tensor_seconds, st.staging_bytes,
             (long long)(rss1 - rss0), o.verify);
    } else {
      printf("%s: %zu tensors, %.3f GB onto %zu device(s)%s\n", path, tensors, (double)st.bytes_total / 1e9, n,
             o.verify ? ", verified" : "");
      printf("path        %s (%s)\n", rig_load_path_name(st.path), st.why);
      printf("speed       %.2f GB/s (%.3f s end to end; %.3f GB read from the file%s)\n", gbs, t1 - t0,
             (double)st.bytes_read / 1e9, st.direct_io ? " with O_DIRECT" : "");
      printf("first       tensor handed out after %.4f s\n", st.first_tensor_seconds);
      printf("host memory %.1f MiB pinned staging, resident set grew %.1f MiB\n", (double)st.staging_bytes / 1048576.0,
             (double)((long long)(rss1 - rss0)) / 1048576.0);
    }
    rig_load_release(load);
  }
  if (json) printf("]}\n");
  rc = 0;
close:
  for (size_t d = 0; d < pool_count; ++d) rig_load_pool_release(pools[d]);
  rig_load_file_release(file);
out:
  for (size_t d = 0; d < n; ++d) rig_device_release(devices[d]);
  return rc;
}
