package rig

// rig's diagnostics (rig_set_log in rig.h) handed to a Go function or a *log.Logger. Not log/slog: Go on
// Debian 12 is 1.19, and slog came with 1.21; a program on a newer Go passes a func that calls slog.

/*
#cgo pkg-config: rig
#include <stdint.h>
extern int rigGoSetLog(uintptr_t handle, int min_level);
extern int rigGoLogToStderr(int min_level);
*/
import "C"

import (
	"fmt"
	"log"
	"runtime"
	"runtime/cgo"
	"strings"
)

// LogLevel is rig_log_level: how much a diagnostic matters. The values are pinned by rig.h.
type LogLevel int

// The levels of rig.h, least first.
const (
	LogDebug   LogLevel = 0 // a trace asked for by an environment variable (RIG_LOAD_TRACE's milestones)
	LogInfo    LogLevel = 1 // reserved by rig: nothing is said at this level yet
	LogWarning LogLevel = 2 // something asked for cannot be done as asked; a validation layer's warning
	LogError   LogLevel = 3 // a defect found (a validation message counted against the process)
)

// String names the level as a log line would: "debug", "info", "warning", "error".
func (l LogLevel) String() string {
	switch l {
	case LogDebug:
		return "debug"
	case LogInfo:
		return "info"
	case LogWarning:
		return "warning"
	case LogError:
		return "error"
	}
	return fmt.Sprintf("LogLevel(%d)", int(l))
}

//export rigGoSaid
func rigGoSaid(handle C.uintptr_t, level C.int, message *C.char) {
	fn := cgo.Handle(handle).Value().(func(LogLevel, string))
	defer func() { _ = recover() }() // no rig call of the program's is there to raise it in: dropped
	fn(LogLevel(level), C.GoString(message))
}

// SetLog sends every diagnostic of minLevel or above to fn(level, message) from now on; message is one
// line without its newline. fn runs on whichever thread rig says the line on (a load's, a driver's),
// possibly while rig holds a lock: it must not call rig, and should return quickly; a panic in it is
// dropped. rig keeps fn until the process exits (a line said elsewhere while the sink changes may still
// reach the previous one), so each fn handed over stays referenced for good. Waits for nothing.
// InvalidArgument for a level rig does not know.
func SetLog(minLevel LogLevel, fn func(level LogLevel, message string)) error {
	if fn == nil {
		return LogToStderr(minLevel)
	}
	h := cgo.NewHandle(fn)
	if err := setLog(func() C.int { return C.rigGoSetLog(C.uintptr_t(h), C.int(minLevel)) }); err != nil {
		h.Delete()
		return err
	}
	return nil
}

// LogTo sends every diagnostic of minLevel or above to logger, one Print each: "rig warning: <message>"
// (logger's own prefix and flags first). See SetLog.
func LogTo(logger *log.Logger, minLevel LogLevel) error {
	if logger == nil {
		return &Error{Status: InvalidArgument, Message: "LogTo: logger is nil"}
	}
	return SetLog(minLevel, func(level LogLevel, message string) {
		logger.Print("rig ", level, ": ", strings.TrimSuffix(message, "\n"))
	})
}

// LogToStderr restores rig's default: each diagnostic of minLevel or above as a line on stderr.
func LogToStderr(minLevel LogLevel) error {
	return setLog(func() C.int { return C.rigGoLogToStderr(C.int(minLevel)) })
}

// setLog runs rig_set_log and reads its message on the same thread, as call does for the raw layer.
func setLog(f func() C.int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if st := Status(f()); st != OK {
		return &Error{Status: st, Message: lastError()}
	}
	return nil
}
