/* `rig probe` as a program of its own, for the GPU script when the rig tool is built without it. */
#include "commands.h"

int main(int argc, char **argv) { return rig_tool_probe(argc, argv); }
