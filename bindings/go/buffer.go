package rig

import (
	"runtime"
	"runtime/cgo"
	"unsafe"

	"rig.dev/rig/internal/raw"
)

// Buffer is bytes of one allocation, seen by one device.
type Buffer struct{ owned }

func newBuffer(f func(out []uintptr) raw.Enum_SS_rig_status) (*Buffer, error) {
	out := make([]uintptr, 1)
	if err := call(func() raw.Enum_SS_rig_status { return f(out) }); err != nil {
		return nil, err
	}
	b := &Buffer{owned{h: out[0], release: raw.Rig_buffer_release}}
	runtime.SetFinalizer(b, func(b *Buffer) { b.releaseOnce() })
	return b, nil
}

// CreateBuffer makes a new allocation of length bytes on device.
func CreateBuffer(d *Device, length uint64, memory Memory) (*Buffer, error) {
	defer runtime.KeepAlive(d)
	return newBuffer(func(out []uintptr) raw.Enum_SS_rig_status {
		return raw.Rig_buffer_create(d.h, int64(length), raw.Enum_SS_rig_memory(memory), out)
	})
}

// WrapBytes makes a host buffer over a C copy of data (Go memory cannot stay lent to C beyond a call in
// Go 1.19, which has no runtime.Pinner). readOnly makes it a read-only wrap, as of a read-only mapping.
func WrapBytes(data []byte, readOnly bool) (*Buffer, error) {
	ro := 0
	if readOnly {
		ro = 1
	}
	return newBuffer(func(out []uintptr) raw.Enum_SS_rig_status { return raw.Rig_go_wrap_copy(data, ro, out) })
}

// View is a buffer over bytes [offset, offset+length) of b.
func (b *Buffer) View(offset, length uint64) (*Buffer, error) {
	defer runtime.KeepAlive(b)
	return newBuffer(func(out []uintptr) raw.Enum_SS_rig_status {
		return raw.Rig_buffer_view(b.h, int64(offset), int64(length), out)
	})
}

// Borrow is a buffer on d over b's bytes, sharing their stamps.
func (b *Buffer) Borrow(d *Device) (*Buffer, error) {
	defer runtime.KeepAlive(b)
	defer runtime.KeepAlive(d)
	return newBuffer(func(out []uintptr) raw.Enum_SS_rig_status { return raw.Rig_buffer_borrow(d.h, b.h, out) })
}

// Len is the buffer's length in bytes.
func (b *Buffer) Len() (uint64, error) {
	defer runtime.KeepAlive(b)
	n := make([]uint64, 1)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_buffer_length(b.h, n) })
	return n[0], err
}

// Device is the buffer's device (borrowed: releasing it does nothing).
func (b *Buffer) Device() (*Device, error) {
	defer runtime.KeepAlive(b)
	out := make([]uintptr, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_buffer_device(b.h, out) }); err != nil {
		return nil, err
	}
	return newDevice(out[0], false), nil
}

// ReadInto copies bytes from offset into dst after the buffer's last write (rule 5).
func (b *Buffer) ReadInto(offset uint64, dst []byte) error {
	defer runtime.KeepAlive(b)
	return call(func() raw.Enum_SS_rig_status { return raw.Rig_buffer_read_into(b.h, int64(offset), dst) })
}

// WriteFrom copies src into the buffer at offset after every use (rule 6).
func (b *Buffer) WriteFrom(offset uint64, src []byte) error {
	defer runtime.KeepAlive(b)
	return call(func() raw.Enum_SS_rig_status { return raw.Rig_buffer_write_from(b.h, int64(offset), src) })
}

// Bytes reads the whole buffer.
func (b *Buffer) Bytes() ([]byte, error) {
	n, err := b.Len()
	if err != nil {
		return nil, err
	}
	out := make([]byte, n)
	return out, b.ReadInto(0, out)
}

// Read runs fn over the buffer's bytes after its last write; the slice is valid only during fn. A panic
// in fn is raised again by Read once rig has returned.
func (b *Buffer) Read(fn func([]byte)) error { return b.access(fn, raw.Rig_go_buffer_read) }

// Write runs fn over the buffer's bytes after every use; its writes land in the buffer.
func (b *Buffer) Write(fn func([]byte)) error { return b.access(fn, raw.Rig_go_buffer_write) }

func (b *Buffer) access(fn func([]byte), through func(uintptr, uintptr) raw.Enum_SS_rig_status) error {
	defer runtime.KeepAlive(b)
	c := &accessCall{fn: fn}
	h := cgo.NewHandle(c)
	defer h.Delete()
	err := call(func() raw.Enum_SS_rig_status { return through(b.h, uintptr(h)) })
	c.rethrow()
	return err
}

// Close releases the handle; the allocation goes once no buffer or run holds it.
func (b *Buffer) Close() error { return b.releaseOnce() }

// String names the handle ("rig.Buffer(0x...)").
func (b *Buffer) String() string { return b.describe("Buffer") }

// WrapC makes a host buffer over memory outside Go's heap (C.malloc, syscall.Mmap) without a copy. The
// caller keeps the memory valid until every buffer over it is released and its use reached (rig calls
// nothing back for it).
func WrapC(data []byte, readOnly bool) (*Buffer, error) {
	ro := 0
	if readOnly {
		ro = 1
	}
	var p uintptr
	if len(data) > 0 {
		p = uintptr(unsafe.Pointer(&data[0]))
	}
	return newBuffer(func(out []uintptr) raw.Enum_SS_rig_status { return raw.Rig_go_wrap_c(p, int64(len(data)), ro, out) })
}

// Export is the buffer's bytes as a slice over rig's memory, ordered only as of this call (rig.h,
// rig_buffer_export): later reads and writes through it follow no work. Valid until the last buffer over
// the allocation is released.
func (b *Buffer) Export() ([]byte, error) {
	defer runtime.KeepAlive(b)
	p := make([]unsafe.Pointer, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_buffer_export(b.h, p) }); err != nil {
		return nil, err
	}
	n, err := b.Len()
	if err != nil {
		return nil, err
	}
	return cBytes(p[0], cSize(n)), nil
}
