package rig

import (
	"os"
	"runtime"
	"runtime/cgo"

	"rig.dev/rig/internal/raw"
)

// Interop is a kind of native handle rig can turn into or from its own (rig_interop_kind).
type Interop int

// The kinds of rig_interop.h that this package binds.
const (
	DevicePointer Interop = 5
	HostFd        Interop = 6
	SemaphoreFd   Interop = 11
	SyncFd        Interop = 12
)

// Supports says whether kind works for d, decided by the device alone. Pure read.
func (d *Device) Supports(kind Interop) (bool, error) {
	defer runtime.KeepAlive(d)
	out := make([]int32, 1)
	err := call(func() raw.Enum_SS_rig_status {
		return raw.Rig_interop_supported(d.h, 0, raw.Enum_SS_rig_interop_kind(kind), out)
	})
	return out[0] != 0, err
}

// File is a new eventfd, as an *os.File, that becomes readable once p is reached (or can never be): for
// poll and epoll loops. Waits for nothing (a thread of rig's waits where p is not reached yet).
func (p Point) File() (*os.File, error) {
	fd := make([]int32, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_point_fd(uint64(p), fd) }); err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd[0]), "rig-point-"+p.String()), nil
}

// ExportSyncFile is a new sync file that signals once p is reached; nil where p already is (Vulkan's
// convention). Commits p; waits for nothing else. Unsupported off Vulkan.
func (p Point) ExportSyncFile() (*os.File, error) {
	fd := make([]int32, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_point_export_sync_fd(uint64(p), fd) }); err != nil {
		return nil, err
	}
	if fd[0] < 0 {
		return nil, nil
	}
	return os.NewFile(uintptr(fd[0]), "rig-sync-"+p.String()), nil
}

// ExportSemaphore is a new descriptor of the timeline semaphore of p's device and the value that covers
// p. Commits p; waits for nothing else. Unsupported off Vulkan.
func (p Point) ExportSemaphore() (*os.File, uint64, error) {
	fd, value := make([]int32, 1), make([]uint64, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_point_export_semaphore_fd(uint64(p), fd, value) }); err != nil {
		return nil, 0, err
	}
	return os.NewFile(uintptr(fd[0]), "rig-semaphore-"+p.String()), value[0], nil
}

// ImportSyncFile is a new point of d that follows sync file f (nil: one already signaled). f stays the
// caller's. Never blocks the host.
func (d *Device) ImportSyncFile(f *os.File) (Point, error) {
	defer runtime.KeepAlive(d)
	defer runtime.KeepAlive(f)
	fd := -1
	if f != nil {
		fd = int(f.Fd())
	}
	out := make([]uint64, 1)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_point_import_sync_fd(d.h, fd, out) })
	return Point(out[0]), err
}

// ImportSemaphore is a new point of d that follows the timeline semaphore of f reaching value. f stays
// the caller's. Never blocks the host.
func (d *Device) ImportSemaphore(f *os.File, value uint64) (Point, error) {
	defer runtime.KeepAlive(d)
	defer runtime.KeepAlive(f)
	out := make([]uint64, 1)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_point_import_semaphore_fd(d.h, int(f.Fd()), value, out) })
	return Point(out[0]), err
}

// WrapDevice is a buffer of d over length bytes of its memory at address (a CUdeviceptr or HIP pointer;
// host memory for a memory device). release (nil: none) runs once, on a thread of rig's, after the last
// buffer over it is released and every use reached; the memory must stay valid until then. Waits for
// nothing.
func WrapDevice(d *Device, address, length uint64, release func()) (*Buffer, error) {
	defer runtime.KeepAlive(d)
	var h cgo.Handle
	if release != nil {
		h = cgo.NewHandle(release)
	}
	b, err := newBuffer(func(out []uintptr) raw.Enum_SS_rig_status {
		return raw.Rig_go_wrap_device(d.h, address, int64(length), uintptr(h), out)
	})
	if err != nil && h != 0 {
		h.Delete() // rig calls no release for a wrap that failed
	}
	return b, err
}

// DeviceAddress is the address of b's first byte as its device's work sees it (the host address for
// memory devices). Ordered by nothing. Unsupported for Vulkan. Pure read.
func (b *Buffer) DeviceAddress() (uint64, error) {
	defer runtime.KeepAlive(b)
	out := make([]uint64, 1)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_buffer_device_address(b.h, out) })
	return out[0], err
}

// LastWrite is the allocation's last write as a point (zero if none): what a consumer outside rig
// follows. Pure read.
func (b *Buffer) LastWrite() (Point, error) {
	defer runtime.KeepAlive(b)
	out := make([]uint64, 1)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_buffer_last_write(b.h, out) })
	return Point(out[0]), err
}
