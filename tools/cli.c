/* The rig command's shared pieces (tools/cli.h). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rig_tool_exit_for(rig_verdict_kind kind) {
  switch (kind) {
    case RIG_VERDICT_USABLE:
    case RIG_VERDICT_NOT_NEEDED: return RIG_EXIT_OK;
    case RIG_VERDICT_REFUSED: return RIG_EXIT_REFUSED;
    case RIG_VERDICT_TOO_SLOW: return RIG_EXIT_TOO_SLOW;
    case RIG_VERDICT_STILL_REGISTERED: return RIG_EXIT_STILL_REGISTERED;
    default: return RIG_EXIT_INCONCLUSIVE;
  }
}

rig_status rig_tool_open_device(const char *name, rig_device *out) {
  if (name && strncmp(name, "memory:", 7) == 0) return rig_memory_device(name + 7, out);
  if (name && strcmp(name, "host") == 0) return rig_host(out);
  /* "cpu" as Python's rig.Device("cpu") and torch name host memory: the memory device "cpu" */
  if (name && strcmp(name, "cpu") == 0) return rig_memory_device("cpu", out);
  return rig_device_open(name, out);
}

int rig_tool_parse_size(const char *s, uint64_t *out) {
  if (!s || *s < '0' || *s > '9') return -1; /* strtoull would take a sign or spaces */
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return -1;
  uint64_t mul = 1;
  if (strcmp(end, "K") == 0 || strcmp(end, "k") == 0 || strcmp(end, "KiB") == 0) mul = 1ull << 10;
  else if (strcmp(end, "M") == 0 || strcmp(end, "MiB") == 0) mul = 1ull << 20;
  else if (strcmp(end, "G") == 0 || strcmp(end, "GiB") == 0) mul = 1ull << 30;
  else if (*end) return -1;
  if (v > UINT64_MAX / mul) return -1;
  *out = (uint64_t)v * mul;
  return 0;
}

int rig_tool_bad_option(const char *command, int c, char **argv) {
  const char *arg = argv[optind - 1];
  if (c == ':') fprintf(stderr, "rig %s: %s needs a value\n", command, arg);
  else if (strncmp(arg, "--", 2) == 0 && strchr(arg, '=') && optopt)
    fprintf(stderr, "rig %s: %.*s takes no value\n", command, (int)(strchr(arg, '=') - arg), arg);
  else fprintf(stderr, "rig %s: unknown option %s (rig %s --help lists them)\n", command, arg, command);
  return RIG_EXIT_USAGE;
}

static int progress_shown;

void rig_tool_progress(const char *format, ...) {
  if (!isatty(STDERR_FILENO)) return;
  va_list ap;
  va_start(ap, format);
  fputs("\r\033[K", stderr); /* to the line's start, erase it */
  vfprintf(stderr, format, ap);
  va_end(ap);
  fflush(stderr);
  progress_shown = 1;
}

void rig_tool_progress_end(void) {
  if (!progress_shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  progress_shown = 0;
}
