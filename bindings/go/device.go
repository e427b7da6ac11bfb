package rig

import (
	"context"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"rig.dev/rig/internal/raw"
)

// Device is a device: the host, a memory device, a GPU.
type Device struct{ owned }

func newDevice(h uintptr, own bool) *Device {
	d := &Device{owned{h: h, release: raw.Rig_device_release}}
	if own {
		runtime.SetFinalizer(d, func(d *Device) { d.releaseOnce() })
	} else {
		d.released = 1 // borrowed (a buffer's device): not ours to release
	}
	return d
}

func openDevice(f func(out []uintptr) raw.Enum_SS_rig_status) (*Device, error) {
	out := make([]uintptr, 1)
	if err := call(func() raw.Enum_SS_rig_status { return f(out) }); err != nil {
		return nil, err
	}
	return newDevice(out[0], true), nil
}

// Host is the host as a device.
func Host() (*Device, error) {
	return openDevice(func(out []uintptr) raw.Enum_SS_rig_status { return raw.Rig_host(out) })
}

// MemoryDevice makes a new memory device called name.
func MemoryDevice(name string) (*Device, error) {
	return openDevice(func(out []uintptr) raw.Enum_SS_rig_status { return raw.Rig_memory_device(name, out) })
}

// OpenDevice opens a driver's device: "cuda:0", "hip:1", "vulkan:0".
func OpenDevice(name string) (*Device, error) {
	return openDevice(func(out []uintptr) raw.Enum_SS_rig_status { return raw.Rig_device_open(name, out) })
}

// DeviceList names the devices OpenDevice accepts.
func DeviceList() []string {
	var names []string
	for i := int64(0); ; i++ {
		n := raw.Rig_swig_device_name(i)
		if n == "" {
			return names
		}
		names = append(names, n)
	}
}

// Close waits for the device's work and releases it. Later uses answer rig's InvalidHandle.
func (d *Device) Close() error { return d.releaseOnce() }

// String names the handle ("rig.Device(0x...)"); Info tells more.
func (d *Device) String() string { return d.describe("Device") }

// DeviceInfo is rig_device_info, its strings copied.
type DeviceInfo struct {
	Name, Framework, Model string
	Kind                   int
	Index                  uint32
	MemoryBytes            uint64
	Integrated             int
	Lost                   bool
}

// Info describes the device.
func (d *Device) Info() (DeviceInfo, error) {
	defer runtime.KeepAlive(d)
	s := make([]unsafe.Pointer, 3)
	n := make([]int64, 5)
	var info DeviceInfo
	err := call(func() raw.Enum_SS_rig_status {
		st := raw.Rig_go_device_info(d.h, s, n)
		if st == raw.RIG_OK { // the strings live while the device does: copy them now
			info = DeviceInfo{cString(s[0]), cString(s[1]), cString(s[2]), int(n[0]), uint32(n[1]),
				uint64(n[2]), int(n[3]), n[4] != 0}
		}
		return st
	})
	return info, err
}

func (d *Device) value(f func(uintptr, []uint64) raw.Enum_SS_rig_status) (uint64, error) {
	defer runtime.KeepAlive(d)
	v := make([]uint64, 1)
	err := call(func() raw.Enum_SS_rig_status { return f(d.h, v) })
	return v[0], err
}

// Submitted is the last value given on the device's timeline.
func (d *Device) Submitted() (uint64, error) { return d.value(raw.Rig_device_submitted) }

// Signaled is the last value the device reached (commits nothing).
func (d *Device) Signaled() (uint64, error) { return d.value(raw.Rig_device_signaled) }

// Wait waits until the device reached point p (committing its held work first) or ctx is done: on
// ctx's deadline the error is both rig's Timeout and context.DeadlineExceeded (errors.Is), on
// cancellation Interrupted and context.Canceled. Background waits without a bound. A point of another
// device is InvalidArgument (WaitPoint waits for any device's); the zero Point is reached at once.
func (d *Device) Wait(ctx context.Context, p Point) error {
	value, err := d.own(p)
	if err != nil || value == 0 {
		return err
	}
	defer runtime.KeepAlive(d)
	return waitContext(ctx, func(ns uint64) raw.Enum_SS_rig_status { return raw.Rig_device_wait(d.h, value, ns) })
}

// WaitTimeout waits until the device reached point p for at most timeout (Forever: no bound; 0 or less:
// only checks). Timeout when it is not reached by then; InvalidArgument for a point of another device.
func (d *Device) WaitTimeout(p Point, timeout time.Duration) error {
	value, err := d.own(p)
	if err != nil || value == 0 {
		return err
	}
	defer runtime.KeepAlive(d)
	return call(func() raw.Enum_SS_rig_status { return raw.Rig_device_wait(d.h, value, timeoutNs(timeout)) })
}

// own is p's value where p is a point of d (0 for the zero Point), else InvalidArgument naming p (a value
// past d's submitted is rig_device_wait's to answer).
func (d *Device) own(p Point) (uint64, error) {
	if p == 0 {
		return 0, nil
	}
	submitted, err := d.Submitted()
	if err != nil {
		return 0, err
	}
	if submitted == 0 {
		return 0, &Error{Status: InvalidArgument, Message: fmt.Sprintf("point %v is not of this device (it has none yet)", p)}
	}
	first, err := d.Point(1)
	if err != nil {
		return 0, err
	}
	if first.DeviceIndex() != p.DeviceIndex() {
		return 0, &Error{Status: InvalidArgument, Message: fmt.Sprintf("point %v is not of this device (its points are device#%d's)", p, first.DeviceIndex())}
	}
	return p.Value(), nil
}

// Point is the point of value (1..Submitted) on this device.
func (d *Device) Point(value uint64) (Point, error) {
	v, err := d.value(func(h uintptr, out []uint64) raw.Enum_SS_rig_status { return raw.Rig_device_point(h, value, out) })
	return Point(v), err
}

// LostReason says why the device was lost, "" if it is not.
func (d *Device) LostReason() (string, error) {
	defer runtime.KeepAlive(d)
	why := make([]unsafe.Pointer, 1)
	var s string
	err := call(func() raw.Enum_SS_rig_status {
		st := raw.Rig_device_lost_reason(d.h, why)
		s = cString(why[0])
		return st
	})
	return s, err
}

// WaitPoint waits for a point of any device, or until ctx is done (as Device.Wait).
func WaitPoint(ctx context.Context, point Point) error {
	return waitContext(ctx, func(ns uint64) raw.Enum_SS_rig_status { return raw.Rig_wait_point(uint64(point), ns) })
}

// WaitPointTimeout waits for a point of any device for at most timeout (as Device.WaitTimeout).
func WaitPointTimeout(point Point, timeout time.Duration) error {
	return call(func() raw.Enum_SS_rig_status { return raw.Rig_wait_point(uint64(point), timeoutNs(timeout)) })
}

