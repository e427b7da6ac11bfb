/* `rig probe`: the mapped-registration verdict of a device for a region of a real file. */
#ifndef RIG_TOOLS_PROBE_H
#define RIG_TOOLS_PROBE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Runs `rig probe FILE [options]`; argv[0] is "probe". Returns the process exit status: 0 when a verdict
 * was printed (whatever it is), 1 when none could be reached (the file, the device), 2 for a usage error. */
int rig_tool_probe(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
