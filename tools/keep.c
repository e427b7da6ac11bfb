/* `rig keep` and `rig attach`: a keeper in the foreground, and a client that lists or verifies what a
 * keeper serves (rig_keep.h, docs/keep.md). */
#define _GNU_SOURCE
#include "cli.h"
#include "commands.h"

#include <rig.h>
#include <rig_keep.h>
#include <rig_load.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES 64

static void log_line(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "rig keep: %s\n", line);
}

/* Opens every device of a comma-separated list; the count opened, or 0 after saying why on stderr. */
static size_t open_devices(char *list, rig_device *devices) {
  size_t n = 0;
  for (char *save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    if (n == MAX_DEVICES || rig_tool_open_device(name, &devices[n]) != RIG_OK) {
      fprintf(stderr, "rig keep: device %s: %s\n", name, n == MAX_DEVICES ? "more than 64 devices" : rig_last_error());
      for (size_t i = 0; i < n; ++i) rig_device_release(devices[i]);
      return 0;
    }
    ++n;
  }
  return n;
}

static int keep_usage(void) {
  printf("usage: rig keep CHECKPOINT --device D[,D...] --socket PATH [--gid GID] [--mode OCTAL] [--writable]\n"
         "                [--max-clients N]\n"
         "  Loads CHECKPOINT onto the devices and serves its tensors to the processes that attach at PATH\n"
         "  (rig attach, rig_attach, rig.attach), in the foreground, logging to stderr. Ready once PATH\n"
         "  exists (clients may attach while it still loads). SIGTERM or SIGINT: stops listening, waits for\n"
         "  the clients to let go, exits 0; a second signal cuts them off (exit 1). SIGHUP: loads the\n"
         "  checkpoint again as it is now (new attaches get it; attached clients keep theirs).\n"
         "  --device D[,D...]  where the tensors live (cuda:0, vulkan:0, memory:NAME, cpu)\n"
         "  --socket PATH      the UNIX socket to make (mode 0600 unless --mode)\n"
         "  --gid GID          peers of this group may attach too (the keeper's own uid always may)\n"
         "  --mode OCTAL       the socket's permission bits (0660 lets --gid's group connect)\n"
         "  --writable         clients map the tensors writable (every client's writes are every client's)\n"
         "  --max-clients N    connections served at once (default 64)\n");
  return RIG_EXIT_OK;
}

/* Waits for SIGTERM or SIGINT (blocked in every thread) up to `ms` milliseconds (-1: for ever); 1 if one
 * came. A SIGHUP meanwhile reloads the checkpoint. */
static int signalled(rig_keeper k, const sigset_t *set, long ms) {
  for (;;) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    int sig = ms < 0 ? sigwaitinfo(set, NULL) : sigtimedwait(set, NULL, &t);
    if (sig < 0 && errno == EINTR) continue;
    if (sig != SIGHUP) return sig > 0;
    if (rig_keep_reload(k) != RIG_OK) fprintf(stderr, "rig keep: reload: %s\n", rig_last_error());
  }
}

int rig_tool_keep(int argc, char **argv) {
  static const struct option options[] = {{"device", required_argument, NULL, 'd'},
                                          {"socket", required_argument, NULL, 's'},
                                          {"gid", required_argument, NULL, 'g'},
                                          {"mode", required_argument, NULL, 'm'},
                                          {"writable", no_argument, NULL, 'w'},
                                          {"max-clients", required_argument, NULL, 'c'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  char *device_list = NULL, *end;
  const char *socket_path = NULL;
  rig_keep_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.log = log_line;
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":d:s:g:m:wc:h", options, NULL)) != -1) {
    switch (c) {
      case 'd': device_list = optarg; break;
      case 's': socket_path = optarg; break;
      case 'g':
        o.has_gid = 1;
        o.gid = (uint32_t)strtoul(optarg, &end, 10);
        if (*end || !*optarg) return fprintf(stderr, "rig keep: --gid %s is no number\n", optarg), RIG_EXIT_USAGE;
        break;
      case 'm':
        o.socket_mode = (uint32_t)strtoul(optarg, &end, 8);
        if (*end || !*optarg || o.socket_mode > 0777 || !o.socket_mode)
          return fprintf(stderr, "rig keep: --mode %s is no permission (octal, 1..0777)\n", optarg), RIG_EXIT_USAGE;
        break;
      case 'w': o.writable = 1; break;
      case 'c':
        o.max_clients = strtoul(optarg, &end, 10);
        if (*end || !o.max_clients) return fprintf(stderr, "rig keep: --max-clients %s\n", optarg), RIG_EXIT_USAGE;
        break;
      case 'h': return keep_usage();
      default: return rig_tool_bad_option("keep", c, argv);
    }
  }
  if (optind + 1 != argc || !device_list || !socket_path) {
    fprintf(stderr, "rig keep: one CHECKPOINT, --device and --socket are needed (rig keep --help)\n");
    return RIG_EXIT_USAGE;
  }
  /* Blocked before rig starts a thread, so only sigwait below sees them. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);
  rig_device devices[MAX_DEVICES];
  size_t n = open_devices(device_list, devices);
  if (!n) return RIG_EXIT_ERROR;
  rig_keeper k;
  int rc = RIG_EXIT_OK;
  if (rig_keep_start(argv[optind], devices, n, socket_path, &o, &k) != RIG_OK) {
    fprintf(stderr, "rig keep: %s\n", rig_last_error());
    rc = RIG_EXIT_ERROR;
  } else {
    signalled(k, &set, -1);
    size_t clients = 0;
    rig_keep_client_count(k, &clients);
    if (clients) fprintf(stderr, "rig keep: stopping: waiting for %zu clients to let go\n", clients);
    int cut = 0;
    while (!cut && rig_keep_client_count(k, &clients) == RIG_OK && clients) cut = signalled(k, &set, 50);
    if (rig_keep_stop(k, 0) != RIG_OK) {
      fprintf(stderr, "rig keep: %s\n", rig_last_error());
      rc = RIG_EXIT_ERROR;
    }
  }
  for (size_t i = 0; i < n; ++i) rig_device_release(devices[i]);
  return rc;
}

static const char *dtype_name(rig_dtype d) {
  static const char *names[] = {"?", "U8", "I8", "BOOL", "F8_E4M3", "F8_E5M2", "U16", "I16", "F16", "BF16",
                                "U32", "I32", "F32", "U64", "I64", "F64", "GGML"};
  return d >= 1 && d <= RIG_DTYPE_GGML ? names[d] : "?";
}

/* Whether the attached tensor's bytes equal the checkpoint's (matched by name). */
static int same_as_file(rig_buffer b, rig_load_file f, const char *name, uint64_t length) {
  size_t index;
  rig_load_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  if (rig_load_find(f, name, &index) != RIG_OK || rig_load_tensor_get(f, index, &t) != RIG_OK || t.length != length)
    return 0;
  const char *path = NULL;
  if (rig_load_shard_get(f, t.shard, &path, NULL) != RIG_OK) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  unsigned char *want = malloc(length + 1), *got = malloc(length + 1);
  int same = fd >= 0 && want && got && pread(fd, want, length, (off_t)t.offset) == (ssize_t)length &&
             rig_buffer_read_into(b, 0, got, length) == RIG_OK && memcmp(want, got, length) == 0;
  if (fd >= 0) close(fd);
  free(want);
  free(got);
  return same;
}

int rig_tool_attach(int argc, char **argv) {
  static const struct option options[] = {{"list", no_argument, NULL, 'l'},
                                          {"verify", required_argument, NULL, 'v'},
                                          {"device", required_argument, NULL, 'd'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  int list = 0, c;
  const char *verify = NULL, *device = "memory:attach";
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":lv:d:h", options, NULL)) != -1) {
    if (c == 'l') list = 1;
    else if (c == 'v') verify = optarg;
    else if (c == 'd') device = optarg;
    else if (c == 'h') {
      printf("usage: rig attach SOCKET --list | --verify CHECKPOINT [--device D]\n"
             "  Attaches to the keeper at SOCKET (rig keep).\n"
             "  --list               its tensors: name, dtype, shape, bytes (no memory is mapped)\n"
             "  --verify CHECKPOINT  maps every tensor and compares its bytes with CHECKPOINT's (exit 1 on a\n"
             "                       difference); waits for tensors the keeper still loads\n"
             "  --device D           the device to attach for (default memory:attach)\n");
      return RIG_EXIT_OK;
    } else return rig_tool_bad_option("attach", c, argv);
  }
  if (optind + 1 != argc || list == !!verify) {
    fprintf(stderr, "rig attach: one SOCKET and one of --list or --verify are needed (rig attach --help)\n");
    return RIG_EXIT_USAGE;
  }
  rig_device d;
  rig_attachment a;
  rig_load_file f = NULL;
  if (rig_tool_open_device(device, &d) != RIG_OK) return fprintf(stderr, "rig attach: %s\n", rig_last_error()), RIG_EXIT_ERROR;
  if (rig_attach(argv[optind], d, &a) != RIG_OK) {
    fprintf(stderr, "rig attach: %s\n", rig_last_error());
    rig_device_release(d);
    return RIG_EXIT_ERROR;
  }
  if (verify && rig_load_open(verify, RIG_LOAD_FORMAT_AUTO, &f) != RIG_OK) {
    fprintf(stderr, "rig attach: %s\n", rig_last_error());
    verify = NULL;
  }
  int rc = list || f ? RIG_EXIT_OK : RIG_EXIT_ERROR;
  size_t count = 0;
  uint64_t bytes = 0;
  rig_attachment_count(a, &count);
  for (size_t i = 0; i < count && rc == RIG_EXIT_OK; ++i) {
    rig_keep_tensor t;
    memset(&t, 0, sizeof t);
    t.size = sizeof t;
    rig_buffer b;
    if (rig_attachment_get(a, i, &t, f ? &b : NULL) != RIG_OK) {
      fprintf(stderr, "rig attach: tensor %zu: %s\n", i, rig_last_error());
      rc = RIG_EXIT_ERROR;
      break;
    }
    if (list) {
      printf("%s %s [", t.name, dtype_name(t.dtype));
      for (uint32_t k = 0; k < t.rank; ++k) printf(k ? ", %llu" : "%llu", (unsigned long long)t.shape[k]);
      printf("] %llu bytes\n", (unsigned long long)t.length);
      continue;
    }
    if (!same_as_file(b, f, t.name, t.length)) {
      fprintf(stderr, "rig attach: tensor '%s' differs from %s\n", t.name, verify);
      rc = RIG_EXIT_ERROR;
    }
    bytes += t.length;
    rig_buffer_release(b);
  }
  if (f && rc == RIG_EXIT_OK) printf("verified %zu tensors, %llu bytes\n", count, (unsigned long long)bytes);
  if (f) rig_load_file_release(f);
  rig_attachment_release(a);
  rig_device_release(d);
  return rc;
}
