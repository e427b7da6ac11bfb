/* The rig command's subcommands. Each entry takes the arguments from its own name on (argv[0] is "probe"
 * for `rig probe ...`), parses them with getopt_long (optind reset, so it may run more than once in a
 * process), prints --help to stdout and returns an exit status from tools/cli.h. A new subcommand is one
 * declaration here and one row in tools/rig.c's table. */
#ifndef RIG_TOOLS_COMMANDS_H
#define RIG_TOOLS_COMMANDS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef int rig_tool_command(int argc, char **argv);

rig_tool_command rig_tool_devices; /* tools/devices.c: what this machine can open */
rig_tool_command rig_tool_demo;    /* tools/demo.c: the seed page's program, prints hello, world */
rig_tool_command rig_tool_probe;   /* tools/probe.cpp: the mapped-registration verdict for a file */
rig_tool_command rig_tool_info;    /* tools/info.cpp: a checkpoint's files, tensors and metadata */
rig_tool_command rig_tool_keep;    /* tools/keep.c: a keeper serving a checkpoint on a socket */
rig_tool_command rig_tool_attach;  /* tools/keep.c: list or verify what a keeper serves */

#ifdef __cplusplus
}
#endif

#endif
