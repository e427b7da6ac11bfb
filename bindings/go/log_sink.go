package rig

// The C side of log.go: rig_set_log's callback as a trampoline to the exported rigGoSaid (a file of its
// own, since cgo keeps definitions out of the preamble of a file that exports).

/*
#cgo pkg-config: rig
#include <stdint.h>
#include <rig.h>
extern void rigGoSaid(uintptr_t handle, int level, char *message);
static void rig_go_said(void *user, rig_log_level level, const char *message) {
  rigGoSaid((uintptr_t)user, (int)level, (char *)message);
}
int rigGoSetLog(uintptr_t handle, int min_level) {
  return (int)rig_set_log(rig_go_said, (void *)handle, (rig_log_level)min_level);
}
int rigGoLogToStderr(int min_level) { return (int)rig_set_log(NULL, NULL, (rig_log_level)min_level); }
*/
import "C"

import "rig.dev/rig/internal/raw"

// lastError is rig_last_error() of this thread.
func lastError() string { return raw.Rig_last_error() }
