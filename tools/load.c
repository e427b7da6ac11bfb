/* The `rig load` subcommand (tools/load.h). Devices are named as `rig devices` names them ("cuda:0",
 * "memory:NAME", ...: rig_tool_open_device). The progress line goes to stderr only on a terminal
 * (rig_tool_progress); the report goes to stdout, as words or as one JSON object (docs/cli-json.md). */
#define _GNU_SOURCE
#include "load.h"

#include <rig.h>
#include <rig_load.h>

#include "cli.h"
#include "json.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEVICES 16
#define MAX_SPLITS 16

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Resident set size in bytes (VmRSS of /proc/self/status), 0 where unreadable. */
static long long rss_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long long kb = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %lld kB", &kb) == 1) break;
  fclose(f);
  return kb * 1024;
}

/* The progress callback: bytes, GB/s and time left, at most ten times a second (rig_tool_progress writes
 * nothing unless stderr is a terminal). */
struct bar {
  double t0, last;
};
static void show_progress(void *user, uint64_t done, uint64_t total) {
  struct bar *b = user;
  double t = now_s();
  if (t - b->last < 0.1 && done < total) return;
  b->last = t;
  double rate = t > b->t0 ? (double)done / (t - b->t0) : 0;
  double left = rate > 0 ? (double)(total - done) / rate : 0;
  rig_tool_progress("rig load: %.2f/%.2f GB, %.2f GB/s, %.1f s left", (double)done / 1e9, (double)total / 1e9,
                    rate / 1e9, left);
}

static void usage(FILE *out) {
  fputs("usage: rig load [OPTIONS] FILE --device NAME[,NAME...]\n"
        "  Loads every tensor of FILE (safetensors or GGUF) onto the devices and reports the path taken and\n"
        "  why, GB/s end to end (until the devices finished the copies), time to the first tensor and host\n"
        "  memory used.\n"
        "  --device NAME[,NAME...]   names from `rig devices` (cuda:0, hip:0, vulkan:0, memory:NAME)\n"
        "  --path auto|staged|registered|direct   default auto (rig(1) says how each works)\n"
        "  --io auto|buffered|direct  how the staged path reads the file (default: by page-cache residency)\n"
        "  --rule each|layer         several devices: every tensor on each, or layers split among them\n"
        "  --split PATTERN:DIM       split every tensor whose name matches the glob PATTERN along DIM over\n"
        "                            the devices (tensor-parallel: device k gets part k; the first parts one\n"
        "                            longer where DIM does not divide); repeat it, the first match applies\n"
        "  --verify                  read every copied range back and compare its XXH3 with the file's\n"
        "  --threads N               reader threads of the staged path (default min(12, 3/4 of the cores))\n"
        "  --chunk SIZE, --staging SIZE, --window SIZE   staged chunk (4M), pinned staging budget (64M),\n"
        "                            registered/direct window (256M); SIZE takes K, M, G suffixes\n"
        "  --arena SIZE              tensors share device allocations of at most SIZE (1G; 1: one each)\n"
        "  --repeat N                load N times in this process through one staging pool per device\n"
        "  --keep-registered         register the whole file on each device once (inside the first load's\n"
        "                            time) and copy every load from it: reloads at the link's rate\n"
        "  --json                    one JSON object on stdout (fields: rig(1))\n"
        "  Exit status: 0 loaded, 1 the file, a device or the load failed (stderr says), 2 usage.\n",
        out);
}

static int pick(const char *option, const char *word, const char *const *names, int count) {
  for (int i = 0; i < count; ++i)
    if (strcmp(word, names[i]) == 0) return i;
  fprintf(stderr, "rig load: --%s %s: one of", option, word);
  for (int i = 0; i < count; ++i) fprintf(stderr, " %s", names[i]);
  fputc('\n', stderr);
  return -1;
}

/* A count or size option: a positive value, or a usage error said on stderr (-1). */
static int number(const char *option, const char *v, int sizes, uint64_t max, uint64_t *out) {
  uint64_t n = 0;
  int ok = rig_tool_parse_size(v, &n) == 0 && (sizes || strspn(v, "0123456789") == strlen(v)) && n > 0 && n <= max;
  if (!ok) {
    fprintf(stderr, "rig load: --%s %s: not a %s\n", option, v, sizes ? "size (N, NK, NM, NG)" : "positive count");
    return -1;
  }
  *out = n;
  return 0;
}

struct args {
  const char *path, *devices;
  int json, repeat, keep;
  rig_load_options o;
  rig_load_rule rule;
  rig_load_split splits[MAX_SPLITS];
  size_t split_count;
};

/* --split PATTERN:DIM (the last colon: a pattern may hold one). 0, or -1 with a usage error said. */
static int split(const char *v, struct args *a) {
  const char *colon = strrchr(v, ':');
  uint64_t dim = 0;
  if (!colon || colon == v || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
      rig_tool_parse_size(colon + 1, &dim) != 0 || dim >= RIG_LOAD_MAX_DIMS) {
    fprintf(stderr, "rig load: --split %s: not PATTERN:DIM (a glob, a colon, a dim below %d)\n", v, RIG_LOAD_MAX_DIMS);
    return -1;
  }
  if (a->split_count == MAX_SPLITS) {
    fprintf(stderr, "rig load: --split: at most %d\n", MAX_SPLITS);
    return -1;
  }
  char *pattern = strndup(v, (size_t)(colon - v)); /* freed by rig_load_command once the load is done */
  if (!pattern) return fprintf(stderr, "rig load: out of memory\n"), -1;
  a->splits[a->split_count++] = (rig_load_split){pattern, (uint32_t)dim};
  return 0;
}

/* Returns -1 to go on, or the exit status to return now (--help, a usage error). */
static int parse(int argc, char **argv, struct args *a) {
  enum { PATH = 256, IO, RULE, VERIFY, THREADS, CHUNK, STAGING, WINDOW, ARENA, REPEAT, KEEP, SPLIT };
  static const struct option options[] = {
      {"device", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'},
      {"help", no_argument, NULL, 'h'},         {"path", required_argument, NULL, PATH},
      {"io", required_argument, NULL, IO},       {"rule", required_argument, NULL, RULE},
      {"verify", no_argument, NULL, VERIFY},     {"threads", required_argument, NULL, THREADS},
      {"chunk", required_argument, NULL, CHUNK}, {"staging", required_argument, NULL, STAGING},
      {"window", required_argument, NULL, WINDOW}, {"arena", required_argument, NULL, ARENA},
      {"repeat", required_argument, NULL, REPEAT}, {"split", required_argument, NULL, SPLIT},
      {"keep-registered", no_argument, NULL, KEEP}, {NULL, 0, NULL, 0}};
  static const char *const paths[] = {"auto", "staged", "registered", "direct"};
  static const char *const ios[] = {"auto", "buffered", "direct"};
  static const char *const rules[] = {"each", "layer"};
  optind = 0; /* GNU getopt: start over, this may not be the process's first parse */
  opterr = 0;
  uint64_t n;
  int k;
  for (int c; (c = getopt_long(argc, argv, ":d:jh", options, NULL)) != -1;) {
    switch (c) {
      case 'd': a->devices = optarg; break;
      case 'j': a->json = 1; break;
      case 'h': usage(stdout); return RIG_EXIT_OK;
      case VERIFY: a->o.verify = 1; break;
      case KEEP: a->keep = 1; break;
      case PATH:
        if ((k = pick("path", optarg, paths, 4)) < 0) return RIG_EXIT_USAGE;
        a->o.path = (rig_load_path)k;
        break;
      case IO:
        if ((k = pick("io", optarg, ios, 3)) < 0) return RIG_EXIT_USAGE;
        a->o.io = (rig_load_io)k;
        break;
      case RULE:
        if ((k = pick("rule", optarg, rules, 2)) < 0) return RIG_EXIT_USAGE;
        a->rule = k ? RIG_LOAD_RULE_BY_LAYER : RIG_LOAD_RULE_EACH;
        break;
      case SPLIT:
        if (split(optarg, a)) return RIG_EXIT_USAGE;
        break;
      case THREADS:
        if (number("threads", optarg, 0, 1024, &n)) return RIG_EXIT_USAGE;
        a->o.threads = (uint32_t)n;
        break;
      case REPEAT:
        if (number("repeat", optarg, 0, 1000, &n)) return RIG_EXIT_USAGE;
        a->repeat = (int)n;
        break;
      case CHUNK:
      case STAGING:
      case WINDOW:
      case ARENA: {
        const char *name = c == CHUNK ? "chunk" : c == STAGING ? "staging" : c == WINDOW ? "window" : "arena";
        if (number(name, optarg, 1, SIZE_MAX / 2, &n)) return RIG_EXIT_USAGE;
        *(c == CHUNK     ? &a->o.chunk_bytes
          : c == STAGING ? &a->o.staging_bytes
          : c == WINDOW  ? &a->o.window_bytes
                         : &a->o.arena_bytes) = (size_t)n;
        break;
      }
      default: return rig_tool_bad_option("load", c, argv);
    }
  }
  if (optind >= argc) return fprintf(stderr, "rig load: which FILE? (rig load --help)\n"), RIG_EXIT_USAGE;
  if (optind + 1 < argc)
    return fprintf(stderr, "rig load: one FILE only (%s and %s given)\n", argv[optind], argv[optind + 1]), RIG_EXIT_USAGE;
  a->path = argv[optind];
  if (!a->devices || !*a->devices)
    return fprintf(stderr, "rig load: which devices? --device NAME[,NAME...] (rig devices lists them)\n"), RIG_EXIT_USAGE;
  return -1;
}

/* One staging pool per device, kept across --repeat loads: no more pinned memory than the tensors need. */
static rig_status make_pools(const struct args *a, rig_load_file file, const rig_device *devices, size_t n,
                             rig_load_pool *pools, size_t *made) {
  size_t chunk = a->o.chunk_bytes ? a->o.chunk_bytes : RIG_LOAD_DEFAULT_CHUNK_BYTES;
  size_t budget = (a->o.staging_bytes ? a->o.staging_bytes : RIG_LOAD_DEFAULT_STAGING_BYTES) / n;
  size_t count = 0;
  uint64_t total = 0;
  rig_load_tensor_count(file, &count);
  for (size_t t = 0; t < count; ++t) {
    rig_load_tensor info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (rig_load_tensor_get(file, t, &info) == RIG_OK) total += info.length;
  }
  if (budget > total + 2 * (chunk + 4096)) budget = (size_t)total + 2 * (chunk + 4096);
  for (size_t d = 0; d < n; ++d) {
    rig_status s = rig_load_pool_create(devices[d], budget, chunk + 4096, &pools[d]);
    if (s != RIG_OK) return s;
    *made = d + 1;
  }
  return RIG_OK;
}

/* Waits for every device to reach what it was given: the load's copies, end to end. */
static rig_status finish_devices(const rig_device *devices, size_t n) {
  for (size_t d = 0; d < n; ++d) {
    uint64_t v = 0;
    rig_status s = rig_device_submitted(devices[d], &v);
    if (s == RIG_OK && v) s = rig_device_wait(devices[d], v, UINT64_MAX);
    if (s != RIG_OK) return s;
  }
  return RIG_OK;
}

/* The bytes each device holds after `load`: its tensors' and slices' buffers' lengths. */
static void device_bytes(rig_load load, size_t tensors, size_t devices, uint64_t *bytes) {
  for (size_t d = 0; d < devices; ++d) {
    bytes[d] = 0;
    for (size_t t = 0; t < tensors; ++t) {
      rig_buffer b;
      size_t length = 0;
      if (rig_load_buffer(load, t, d, &b) != RIG_OK) continue; /* not placed on d */
      if (rig_buffer_length(b, &length) == RIG_OK) bytes[d] += length;
      rig_buffer_release(b);
    }
  }
}

/* One load's report: as an object appended to `loads` (--json), or printed as words when loads is NULL.
 * `on` holds each device's bytes, `names` its name. */
static void print_load(const struct args *a, const rig_load_stats *st, double seconds, long long rss_growth,
                       rig_tool_json *loads, size_t tensors, size_t devices, const uint64_t *on,
                       const char *const *names) {
  double gbs = seconds > 0 ? (double)st->bytes_total / seconds / 1e9 : 0;
  if (a->json) {
    rig_tool_json *o = rig_tool_json_object(), *phases = rig_tool_json_object();
    rig_tool_json_add_string(o, "path", rig_load_path_name(st->path));
    rig_tool_json_add_string(o, "why", st->why);
    rig_tool_json_add_bool(o, "direct_io", st->direct_io);
    rig_tool_json_add_u64(o, "bytes", st->bytes_total);
    rig_tool_json_add_u64(o, "bytes_read", st->bytes_read);
    rig_tool_json_add_u64(o, "bytes_copied", st->bytes_copied);
    rig_tool_json_add_double(o, "seconds", seconds);
    rig_tool_json_add_double(o, "gb_per_s", gbs);
    rig_tool_json_add_double(o, "first_tensor_seconds", st->first_tensor_seconds);
    rig_tool_json_add_u64(o, "staging_bytes", st->staging_bytes);
    rig_tool_json_add_i64(o, "rss_growth_bytes", rss_growth);
    rig_tool_json_add_bool(o, "verified", a->o.verify);
    rig_tool_json *per = rig_tool_json_array();
    for (size_t d = 0; d < devices; ++d) rig_tool_json_add_u64(per, NULL, on[d]);
    rig_tool_json_add(o, "device_bytes", per);
    rig_tool_json_add_double(phases, "read_seconds", st->read_seconds);
    rig_tool_json_add_double(phases, "staging_wait_seconds", st->staging_wait_seconds);
    rig_tool_json_add_double(phases, "alloc_seconds", st->alloc_seconds);
    rig_tool_json_add_double(phases, "submit_seconds", st->submit_seconds);
    rig_tool_json_add(o, "phases", phases);
    rig_tool_json_add(loads, NULL, o);
    return;
  }
  printf("%s: %zu tensors, %.3f GB onto %zu device(s)%s\n", a->path, tensors, (double)st->bytes_total / 1e9, devices,
         a->o.verify ? ", verified" : "");
  printf("path        %s (%s)\n", rig_load_path_name(st->path), st->why);
  printf("speed       %.2f GB/s (%.3f s end to end; %.3f GB read from the file%s)\n", gbs, seconds,
         (double)st->bytes_read / 1e9, st->direct_io ? " with O_DIRECT" : "");
  printf("first       tensor handed out after %.4f s\n", st->first_tensor_seconds);
  for (size_t d = 0; devices > 1 && d < devices; ++d)
    printf("%-12s%s %.3f GB (%llu bytes)\n", d ? "" : "devices", names[d], (double)on[d] / 1e9, (unsigned long long)on[d]);
  printf("host memory %.1f MiB pinned staging, resident set grew %.1f MiB\n", (double)st->staging_bytes / 1048576.0,
         (double)rss_growth / 1048576.0);
  printf("threads     %.3f s reading, %.3f s waiting for staging, %.3f s making buffers, %.3f s submitting "
         "(summed over threads)\n", st->read_seconds, st->staging_wait_seconds, st->alloc_seconds, st->submit_seconds);
}

/* The load the parsed arguments ask for; its exit status. */
static int run(struct args a) {
  rig_device devices[MAX_DEVICES];
  rig_load_pool pools[MAX_DEVICES];
  size_t n = 0, pool_count = 0, tensors = 0;
  rig_load_file file = NULL;
  char error[1024] = "";
  rig_status s = RIG_OK;
  char names[1024];
  snprintf(names, sizeof names, "%s", a.devices);
  const char *opened[MAX_DEVICES]; /* the names of devices[], pointing into names */
  /* --json: one document, printed at the end: schema, file, file_hex, devices, tensors, loads, error */
  rig_tool_json *doc = NULL, *named = NULL, *loads = NULL;
  if (a.json) {
    doc = rig_tool_json_object();
    named = rig_tool_json_array();
    loads = rig_tool_json_array();
    rig_tool_json_add_u64(doc, "schema", 1);
    rig_tool_json_add_string(doc, "file", a.path);
    rig_tool_json_add_hex(doc, "file_hex", a.path, strlen(a.path));
  }
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    rig_tool_json_add_string(named, NULL, name); /* does nothing without --json (named is NULL) */
    if (s != RIG_OK) continue;
    if (n == MAX_DEVICES) {
      s = RIG_INVALID_ARGUMENT;
      snprintf(error, sizeof error, "more than %d devices", MAX_DEVICES);
      continue;
    }
    /* A placement's devices are distinct: memory:A twice would be two devices of one name, cuda:0 twice
     * one GPU given two shares of the tensors. */
    for (size_t i = 0; i < n && s == RIG_OK; ++i)
      if (strcmp(opened[i], name) == 0) {
        s = RIG_INVALID_ARGUMENT;
        snprintf(error, sizeof error, "device %s named twice: give each device once", name);
      }
    if (s != RIG_OK) continue;
    s = rig_tool_open_device(name, &devices[n]);
    if (s != RIG_OK) snprintf(error, sizeof error, "device %s: %s: %s", name, rig_status_name(s), rig_last_error());
    else opened[n++] = name;
  }
  if (s == RIG_OK) {
    s = rig_load_open(a.path, RIG_LOAD_FORMAT_AUTO, &file);
    /* the library's words name the file already */
    if (s != RIG_OK) snprintf(error, sizeof error, "%s: %s", rig_status_name(s), rig_last_error());
    else rig_load_tensor_count(file, &tensors);
  }
  if (a.json) {
    rig_tool_json_add(doc, "devices", named);
    rig_tool_json_add_u64(doc, "tensors", tensors);
  }

  struct bar bar = {0, 0};
  a.o.progress = show_progress;
  a.o.progress_user = &bar;
  for (int r = 0; s == RIG_OK && r < a.repeat; ++r) {
    long long rss0 = rss_bytes();
    double t0 = now_s();
    bar.t0 = t0;
    /* A kept registration is made inside the first load's timing, as the pools below are. */
    for (size_t d = 0; a.keep && r == 0 && d < n && s == RIG_OK; ++d) {
      s = rig_load_file_keep_registered(file, devices[d]);
      if (s != RIG_OK) snprintf(error, sizeof error, "--keep-registered: %s: %s", rig_status_name(s), rig_last_error());
    }
    if (s != RIG_OK) break;
    /* The pools are made inside the first load's timing: a first load pays for its staging. */
    if (a.repeat > 1 && r == 0 && !a.keep && a.o.path != RIG_LOAD_PATH_REGISTERED && a.o.path != RIG_LOAD_PATH_DIRECT) {
      s = make_pools(&a, file, devices, n, pools, &pool_count);
      if (s != RIG_OK) {
        snprintf(error, sizeof error, "staging pool: %s: %s", rig_status_name(s), rig_last_error());
        break;
      }
      a.o.pools = pools;
      a.o.pool_count = pool_count;
    }
    rig_load_placement p;
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    p.devices = devices;
    p.device_count = n;
    p.rule = a.rule;
    p.splits = a.splits;
    p.split_count = a.split_count;
    rig_load load = NULL;
    s = rig_load_start(file, NULL, 0, &p, &a.o, &load);
    if (s == RIG_OK) s = rig_load_wait(load);
    if (s == RIG_OK) s = finish_devices(devices, n);
    double t1 = now_s();
    rig_tool_progress_end();
    if (s != RIG_OK) {
      snprintf(error, sizeof error, "%s: %s: %s", a.path, rig_status_name(s), rig_last_error());
    } else {
      rig_load_stats st;
      memset(&st, 0, sizeof st);
      st.size = sizeof st;
      rig_load_get_stats(load, &st);
      uint64_t on[MAX_DEVICES];
      device_bytes(load, tensors, n, on);
      print_load(&a, &st, t1 - t0, rss_bytes() - rss0, loads, tensors, n, on, opened);
    }
    if (load) rig_load_release(load);
  }
  int printed = 0;
  if (a.json) {
    rig_tool_json_add(doc, "loads", loads);
    rig_tool_json_add_string(doc, "error", s == RIG_OK ? NULL : error);
    printed = rig_tool_json_print(doc, stdout);
  }
  if (s != RIG_OK) fprintf(stderr, "rig load: %s\n", error);
  for (size_t d = 0; d < pool_count; ++d) rig_load_pool_release(pools[d]);
  if (file) rig_load_file_release(file);
  for (size_t d = 0; d < n; ++d) rig_device_release(devices[d]);
  return s == RIG_OK && printed == 0 && !ferror(stdout) ? RIG_EXIT_OK : RIG_EXIT_ERROR;
}

int rig_load_command(int argc, char **argv) {
  struct args a;
  memset(&a, 0, sizeof a);
  a.repeat = 1;
  a.o.size = sizeof a.o;
  a.rule = RIG_LOAD_RULE_EACH;
  int e = parse(argc, argv, &a);
  if (e < 0) e = run(a);
  for (size_t i = 0; i < a.split_count; ++i) free((char *)a.splits[i].pattern);
  return e;
}
