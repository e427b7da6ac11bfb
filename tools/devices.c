/* `rig devices [--json]`: the devices this machine can open, by the names every command takes. */
#include "cli.h"
#include "commands.h"
#include "json.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char *kind_name(rig_device_kind k) {
  switch (k) {
    case RIG_DEVICE_HOST: return "host";
    case RIG_DEVICE_MEMORY: return "memory";
    case RIG_DEVICE_GPU: return "gpu";
    case RIG_DEVICE_CPU: return "cpu";
    default: return "unknown";
  }
}

/* Whether a driver's device shares the host's memory: mapped registration's verdicts depend on it. */
static const char *integration(const rig_device_info *info) {
  if (info->kind != RIG_DEVICE_GPU && info->kind != RIG_DEVICE_CPU) return "not_applicable";
  return info->integrated == 1 ? "integrated" : info->integrated == 0 ? "discrete" : "unknown";
}

/* One row: a device that opened (info set) or one that did not (error set). */
typedef struct {
  const char *name, *framework, *kind, *model, *integration, *error;
  unsigned long long memory_bytes;
} row;

/* One row: as an object appended to `json` (the devices array), or printed as words when json is NULL. */
static void print_row(const row *r, rig_tool_json *json) {
  if (json) {
    rig_tool_json *o = rig_tool_json_object();
    rig_tool_json_add_string(o, "name", r->name);
    rig_tool_json_add_bool(o, "opened", !r->error);
    rig_tool_json_add_string(o, "framework", r->framework);
    rig_tool_json_add_string(o, "kind", r->kind);
    rig_tool_json_add_string(o, "model", r->model);
    rig_tool_json_add_u64(o, "memory_bytes", r->memory_bytes);
    rig_tool_json_add_string(o, "integration", r->integration);
    rig_tool_json_add_string(o, "error", r->error);
    rig_tool_json_add(json, NULL, o);
    return;
  }
  if (r->error) {
    printf("%-12s (cannot open: %s)\n", r->name, r->error);
    return;
  }
  printf("%-12s %-8s %s", r->name, r->framework, r->model);
  if (r->memory_bytes) printf(", %llu MiB", r->memory_bytes >> 20);
  if (strcmp(r->integration, "not_applicable") != 0) printf(", %s", r->integration);
  if (strcmp(r->kind, "cpu") == 0) printf(", CPU");
  printf("\n");
}

int rig_tool_devices(int argc, char **argv) {
  static const struct option options[] = {
      {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  int json = 0, c;
  optind = 0; /* GNU getopt: start over, this may not be the process's first parse */
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":jh", options, NULL)) != -1) {
    if (c == 'j') json = 1;
    else if (c == 'h') {
      printf("usage: rig devices [--json]\n"
             "  Lists every device this machine can open, by the name the other commands take:\n"
             "  memory:NAME (host memory, any number by name), cuda:N, hip:N, vulkan:N.\n"
             "  --json  one JSON object (docs/cli-json.md, man rig(1))\n");
      return RIG_EXIT_OK;
    } else return rig_tool_bad_option("devices", c, argv);
  }
  if (optind < argc) {
    fprintf(stderr, "rig devices: unexpected argument %s\n", argv[optind]);
    return RIG_EXIT_USAGE;
  }
  const char *names[256];
  size_t n = 0;
  rig_status s = rig_device_list(names, 256, &n);
  if (s != RIG_OK) {
    fprintf(stderr, "rig devices: %s: %s\n", rig_status_name(s), rig_last_error());
    return RIG_EXIT_ERROR;
  }
  /* --json: one document, {"schema": 1, "devices": [...], "unavailable": [...] (only when some are)} */
  rig_tool_json *doc = NULL, *rows = NULL, *unavailable = NULL;
  if (json) {
    doc = rig_tool_json_object();
    rows = rig_tool_json_array();
    rig_tool_json_add_u64(doc, "schema", 1);
  } else {
    printf("%-12s %-8s %s\n", "NAME", "FRAMEWORK", "MODEL");
  }
  row memory = {"memory:NAME", "memory", "memory", "host memory, work runs inline (any number, by name)",
                "not_applicable", NULL, 0};
  print_row(&memory, rows);
  for (size_t i = 0; i < n && i < 256; ++i) {
    rig_device d;
    if (rig_device_open(names[i], &d) != RIG_OK) {
      row r = {names[i], NULL, NULL, NULL, NULL, rig_last_error(), 0};
      print_row(&r, rows);
      continue;
    }
    rig_device_info info = {sizeof info};
    rig_device_get_info(d, &info);
    row r = {names[i], info.framework, kind_name(info.kind), info.model, integration(&info), NULL,
             (unsigned long long)info.memory_bytes};
    print_row(&r, rows);
    rig_device_release(d);
  }
  if (json) rig_tool_json_add(doc, "devices", rows);
  /* A backend that lists no device says why (the library not found, its init failed), so that a machine
   * where CUDA should work but does not tells its user what rig met instead of listing nothing. */
  static const char *const backends[] = {"cuda", "hip", "vulkan"};
  int unavailable_count = 0;
  for (size_t b = 0; b < sizeof backends / sizeof *backends; ++b) {
    size_t prefix = strlen(backends[b]);
    int listed = 0;
    for (size_t i = 0; i < n && i < 256 && !listed; ++i)
      listed = strncmp(names[i], backends[b], prefix) == 0 && names[i][prefix] == ':';
    if (listed) continue;
    char first[16];
    snprintf(first, sizeof first, "%s:0", backends[b]);
    rig_device d;
    rig_status why = rig_device_open(first, &d);
    if (why == RIG_OK) { /* listed nothing, yet opens: leave it to rig_device_list's own answer */
      rig_device_release(d);
      continue;
    }
    if (json) {
      if (!unavailable) unavailable = rig_tool_json_array();
      rig_tool_json *o = rig_tool_json_object();
      rig_tool_json_add_string(o, "backend", backends[b]);
      rig_tool_json_add_string(o, "error", rig_last_error());
      rig_tool_json_add(unavailable, NULL, o);
    } else {
      if (!unavailable_count) printf("no device from:\n");
      printf("  %-10s %s: %s\n", backends[b], rig_status_name(why), rig_last_error());
    }
    ++unavailable_count;
  }
  if (json) {
    if (unavailable) rig_tool_json_add(doc, "unavailable", unavailable);
    if (rig_tool_json_print(doc, stdout) != 0) return RIG_EXIT_ERROR;
  }
  return ferror(stdout) ? RIG_EXIT_ERROR : RIG_EXIT_OK;
}
