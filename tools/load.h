/* `rig load FILE --device NAME[,NAME...] [--path P] [--io I] [--verify] [--json] ...`: loads a weights
 * file's tensors onto devices with rig_load.h and reports the path taken and why, GB/s, time to the first
 * tensor and host memory used. argv[0] is "load". Returns the process exit code. */
#ifndef RIG_TOOL_LOAD_H
#define RIG_TOOL_LOAD_H
int rig_load_command(int argc, char **argv);
#endif
