// Package rig orders the work of several devices (CUDA, HIP and Vulkan GPUs, and host memory devices) by
// the memory that work uses: a submit follows the points its buffers' stamps name, so a program never
// names an event or a fence. It is the Go face of librig's C ABI (rig.h).
//
// Import path: rig.dev/rig, a vanity path this project names its module by (it resolves through no
// server: `meson install` puts the module, in the layout of a Go module proxy, under
// PREFIX/share/go/proxy; GOPROXY=file://PREFIX/share/go/proxy then serves it to `go get`, and
// GONOSUMDB=rig.dev/rig keeps go from asking sum.golang.org to vouch for it). librig is
// found with pkg-config (PKG_CONFIG_PATH naming PREFIX's pkgconfig directory), as cgo's
// `#cgo pkg-config: rig` asks: no CGO_CFLAGS, CGO_LDFLAGS or replace line is needed.
//
// Every object owns its rig handle: Close releases it (a finalizer does so for an object collected
// unclosed). A closed object keeps its stale handle, so a later use gets rig's own InvalidHandle error.
// Errors are *Error values carrying the status and rig's message. Waits take a time.Duration or a
// context.Context. Callbacks (buffer reads and writes, host kernels, probe ops) are Go functions; a panic
// in one is raised again by the call that ran it, once rig has returned.
//
// The raw layer SWIG generates from rig.h lives in rig.dev/rig/internal/raw.
package rig

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"rig.dev/rig/internal/raw"
)

// Status is rig_status; the values are pinned by rig.h.
type Status int

// The statuses of rig.h.
const (
	OK              Status = 0
	InvalidArgument Status = 1
	InvalidHandle   Status = 2
	Unsupported     Status = 3
	Unmappable      Status = 4
	OutOfMemory     Status = 5
	Lost            Status = 6
	Timeout         Status = 7
	Interrupted     Status = 8
	Driver          Status = 9
	NotFound        Status = 10
	Busy            Status = 11
)

// String is rig's name of the status ("RIG_TIMEOUT").
func (s Status) String() string { return raw.Rig_status_name(raw.Enum_SS_rig_status(s)) }

// Error is a failed rig call: its status and rig_last_error() of that call.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string { return e.Status.String() + ": " + e.Message }

// Is matches errors.Is(err, &rig.Error{Status: rig.InvalidHandle}): same status, any message.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Status == e.Status && t.Message == ""
}

// call runs one rig call and, where it fails, reads its message. rig_last_error is per OS thread, and a
// goroutine may move between threads between two cgo calls: the goroutine stays on its thread for both.
func call(f func() raw.Enum_SS_rig_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st := Status(f())
	if st == OK {
		return nil
	}
	return &Error{Status: st, Message: raw.Rig_last_error()}
}

// owned is a rig handle released once: by Close, or by the finalizer of the value that holds it.
type owned struct {
	h        uintptr
	released int32
	release  func(uintptr) raw.Enum_SS_rig_status
}

func (o *owned) releaseOnce() error {
	if !atomic.CompareAndSwapInt32(&o.released, 0, 1) {
		return nil
	}
	return call(func() raw.Enum_SS_rig_status { return o.release(o.h) })
}

// describe is the String of a handle-holding value: its kind, its handle, and "closed" once closed.
func (o *owned) describe(kind string) string {
	if atomic.LoadInt32(&o.released) != 0 {
		return fmt.Sprintf("rig.%s(%#x, closed)", kind, o.h)
	}
	return fmt.Sprintf("rig.%s(%#x)", kind, o.h)
}

// Memory is the kind of memory CreateBuffer allocates (rig_memory).
type Memory int

// The kinds of rig_memory.
const (
	MemDevice Memory = 0
	MemPinned Memory = 1
	MemMapped Memory = 2
)

// Access is a submission slot's access (rig_access).
type Access int

// The accesses of rig_access.
const (
	Read      Access = 1
	Write     Access = 2
	ReadWrite Access = 3
)

// Whole, as a length: to the end of the slot's buffer.
const Whole = ^uint64(0)

// Version is rig's run-time version, "MAJOR.MINOR.PATCH".
func Version() string { return raw.Rig_version_string() }
