package rig

import (
	"errors"
	"runtime"
	"runtime/cgo"

	"rig.dev/rig/internal/raw"
)

// Module is device code loaded on one device.
type Module struct{ owned }

// Module formats (rig_module_format).
const (
	ModulePTX           = 1
	ModuleCubin         = 2
	ModuleSPIRV         = 3
	ModuleHIPCodeObject = 4
)

// LoadModule loads device code on d.
func LoadModule(d *Device, format int, code []byte) (*Module, error) {
	defer runtime.KeepAlive(d)
	out := make([]uintptr, 1)
	err := call(func() raw.Enum_SS_rig_status {
		return raw.Rig_module_load(d.h, raw.Enum_SS_rig_module_format(format), code, out)
	})
	if err != nil {
		return nil, err
	}
	m := &Module{owned{h: out[0], release: raw.Rig_module_release}}
	runtime.SetFinalizer(m, func(m *Module) { m.releaseOnce() })
	return m, nil
}

// Close releases the module (rig keeps it while a submission uses it).
func (m *Module) Close() error { return m.releaseOnce() }

// String names the handle.
func (m *Module) String() string { return m.describe("Module") }


// Part is one piece of a submission's work.
type Part interface {
	add(parts uintptr, s *Submission) error
}

var errParts = errors.New("rig: out of memory building a submission's parts")

// CopyPart copies Length bytes (Whole: to the end of the source) from slot Src to slot Dst.
type CopyPart struct {
	Src, Dst             uint32
	SrcOffset, DstOffset uint64
	Length               uint64
}

// Copy copies all of slot src into slot dst.
func Copy(src, dst uint32) CopyPart { return CopyPart{Src: src, Dst: dst, Length: Whole} }

func (c CopyPart) add(p uintptr, _ *Submission) error {
	if raw.Rig_swig_parts_copy(p, uint(c.Src), int64(c.SrcOffset), uint(c.Dst), int64(c.DstOffset), int64(c.Length)) != 0 {
		return errParts
	}
	return nil
}

// FillPart fills Length bytes of slot Dst from Offset with Byte.
type FillPart struct {
	Dst            uint32
	Offset, Length uint64
	Byte           byte
}

func (f FillPart) add(p uintptr, _ *Submission) error {
	if raw.Rig_swig_parts_fill(p, uint(f.Dst), int64(f.Offset), int64(f.Length), f.Byte) != 0 {
		return errParts
	}
	return nil
}

// HostKernel runs Fn on a memory device over every slot's bytes (valid only during Fn). A panic in Fn
// is raised again by the Submit that ran it.
type HostKernel struct {
	Fn func(slots [][]byte)
}

func (k HostKernel) add(p uintptr, s *Submission) error {
	st := &kernelState{fn: k.Fn}
	h := cgo.NewHandle(st)
	s.kernels = append(s.kernels, h)
	if raw.Rig_go_parts_host_kernel(p, uintptr(h)) != 0 {
		return errParts
	}
	return nil
}

// LaunchPart launches Function of Module (GPU devices).
type LaunchPart struct {
	Module      *Module
	Function    string
	Grid, Block [3]uint32
	SharedBytes uint32
	Slots       []uint32
}

func (l LaunchPart) add(p uintptr, s *Submission) error {
	s.modules = append(s.modules, l.Module)
	if raw.Rig_swig_parts_launch(p, l.Module.h, l.Function, uint(l.Grid[0]), uint(l.Grid[1]), uint(l.Grid[2]),
		uint(l.Block[0]), uint(l.Block[1]), uint(l.Block[2]), uint(l.SharedBytes)) != 0 {
		return errParts
	}
	for _, slot := range l.Slots {
		if raw.Rig_swig_parts_launch_slot(p, uint(slot)) != 0 {
			return errParts
		}
	}
	return nil
}

// Submission is the parts of some work for one device and the access of its slots.
type Submission struct {
	owned
	kernels []cgo.Handle // deleted only when the Submission is collected: runs refer to it
	modules []*Module
}

// NewSubmission makes a submission for d.
func NewSubmission(d *Device, parts []Part, access []Access) (*Submission, error) {
	defer runtime.KeepAlive(d)
	s := &Submission{owned: owned{release: raw.Rig_submission_release, released: 1}}
	runtime.SetFinalizer(s, func(s *Submission) {
		s.releaseOnce()
		for _, h := range s.kernels {
			h.Delete()
		}
	})
	p := raw.Rig_swig_parts_new()
	if p == 0 {
		return nil, errParts
	}
	defer raw.Rig_swig_parts_free(p)
	for _, a := range access {
		if raw.Rig_swig_parts_slot(p, int(a)) != 0 {
			return nil, errParts
		}
	}
	for _, part := range parts {
		if err := part.add(p, s); err != nil {
			return nil, err
		}
	}
	out := make([]uintptr, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_swig_submission_make(d.h, p, out) }); err != nil {
		return nil, err
	}
	s.h, s.released = out[0], 0
	return s, nil
}

// Take makes a run of the submission: a buffer table to fill, then submit.
func (s *Submission) Take() (*Run, error) {
	defer runtime.KeepAlive(s)
	out := make([]uintptr, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_run_take(s.h, out) }); err != nil {
		return nil, err
	}
	r := &Run{owned: owned{h: out[0], release: raw.Rig_run_release}, submission: s}
	runtime.SetFinalizer(r, func(r *Run) { r.releaseOnce() })
	return r, nil
}

// Close releases the handle (rig keeps the submission while a run holds it).
func (s *Submission) Close() error { return s.releaseOnce() }

// String names the handle.
func (s *Submission) String() string { return s.describe("Submission") }

// Run is a submission taken with a buffer table.
type Run struct {
	owned
	submission *Submission // keeps the kernels' handles alive while this run can call them
}

// SetBuffer puts b in slot.
func (r *Run) SetBuffer(slot uint32, b *Buffer) error {
	defer runtime.KeepAlive(r)
	defer runtime.KeepAlive(b)
	return call(func() raw.Enum_SS_rig_status { return raw.Rig_run_set_buffer(r.h, uint(slot), b.h) })
}

// SetScalars sets the bytes passed to launches.
func (r *Run) SetScalars(data []byte) error {
	defer runtime.KeepAlive(r)
	return call(func() raw.Enum_SS_rig_status { return raw.Rig_run_set_scalars(r.h, data) })
}

// Submit submits the run after waits, and returns its point.
func (r *Run) Submit(waits ...Point) (Point, error) {
	defer runtime.KeepAlive(r)
	point := make([]uint64, 1)
	raws := rawPoints(waits)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_submit(r.h, raws, point) })
	for _, h := range r.submission.kernels {
		h.Value().(*kernelState).rethrow()
	}
	return Point(point[0]), err
}

// Close releases the run.
func (r *Run) Close() error { return r.releaseOnce() }

// String names the handle.
func (r *Run) String() string { return r.describe("Run") }

// Slot is a buffer and the access a submission makes to it.
type Slot struct {
	Buffer *Buffer
	Access Access
}

// Submit makes, takes and submits in one call, and returns the point.
func Submit(d *Device, parts []Part, slots []Slot) (Point, error) {
	access := make([]Access, len(slots))
	for i, s := range slots {
		access[i] = s.Access
	}
	sub, err := NewSubmission(d, parts, access)
	if err != nil {
		return 0, err
	}
	defer sub.Close()
	run, err := sub.Take()
	if err != nil {
		return 0, err
	}
	defer run.Close()
	for i, s := range slots {
		if err := run.SetBuffer(uint32(i), s.Buffer); err != nil {
			return 0, err
		}
	}
	return run.Submit()
}

