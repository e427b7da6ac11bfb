/* The rig command: a table of subcommands (tools/commands.h), the options every one shares, and the
 * dispatch. Exit statuses: tools/cli.h; the manual: docs/rig.1.scd. */
#include <rig.h>

#include "cli.h"
#include "commands.h"
#include "load.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#ifndef RIG_TOOL_VERSION
#define RIG_TOOL_VERSION "unknown"
#endif

static const struct {
  const char *name;
  rig_tool_command *run;
  const char *summary;
} commands[] = {
    {"devices", rig_tool_devices, "list the devices this machine can open (--json)"},
    {"demo", rig_tool_demo, "run the seed page's program on two memory devices"},
    {"probe", rig_tool_probe, "can a GPU copy straight from FILE's registered mapping?"},
    {"load", rig_load_command, "load a weights file's tensors onto devices"},
    {"info", rig_tool_info, "a checkpoint's files, tensors and metadata (--json); no device"},
    {"keep", rig_tool_keep, "serve a checkpoint's tensors to the processes that attach"},
    {"attach", rig_tool_attach, "list or verify the tensors a keeper serves"},
};
#define COMMAND_COUNT (sizeof commands / sizeof *commands)

static void usage(FILE *out) {
  fputs("usage: rig [--help] [--version] COMMAND [ARGS]\n\ncommands:\n", out);
  for (size_t i = 0; i < COMMAND_COUNT; ++i) fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fputs("\n`rig COMMAND --help` describes a command; man rig(1) has the exit statuses and JSON output.\n", out);
}

static int version(void) {
  printf("rig %s (librig %s)\n", RIG_TOOL_VERSION, rig_version_string());
  return ferror(stdout) ? RIG_EXIT_ERROR : RIG_EXIT_OK;
}

int main(int argc, char **argv) {
  static const struct option options[] = {
      {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
  opterr = 0;
  int c;
  /* "+": stop at the command's name; what follows belongs to the command. */
  while ((c = getopt_long(argc, argv, "+hV", options, NULL)) != -1) {
    if (c == 'h') return usage(stdout), RIG_EXIT_OK;
    if (c == 'V') return version();
    fprintf(stderr, "rig: unknown option %s\n", argv[optind - 1]);
    return usage(stderr), RIG_EXIT_USAGE;
  }
  if (optind >= argc) return usage(stderr), RIG_EXIT_USAGE;
  const char *name = argv[optind];
  if (strcmp(name, "version") == 0) return version();
  if (strcmp(name, "help") == 0) return usage(stdout), RIG_EXIT_OK;
  for (size_t i = 0; i < COMMAND_COUNT; ++i)
    if (strcmp(name, commands[i].name) == 0) return commands[i].run(argc - optind, argv + optind);
  fprintf(stderr, "rig: no command '%s'\n", name);
  return usage(stderr), RIG_EXIT_USAGE;
}
