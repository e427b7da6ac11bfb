package rig

import (
	"runtime"
	"runtime/cgo"
	"unsafe"

	"rig.dev/rig/internal/raw"
)

// Verdict kinds and refusals (pinned by rig.h).
const (
	VerdictUsable          = 1
	VerdictNotNeeded       = 2
	VerdictRefused         = 3
	VerdictTooSlow         = 4
	VerdictInconclusive    = 5
	VerdictStillRegistered = 6

	RefusalNone              = 0
	RefusalIntegratedGPU     = 1
	RefusalDeviceKindUnknown = 2
	RefusalKernelHazard      = 3
	RefusalNotMeasured       = 4
	RefusalWrongBytes        = 5
)

// Verdict is an answer of mapped registration, read once when made.
type Verdict struct {
	Kind      int
	Refusal   int
	Reason    string
	Text      string
	Cacheable bool
}

func (v *Verdict) String() string { return v.Text }

// takeVerdict reads a verdict handle into a Verdict and releases the handle.
func takeVerdict(h uintptr) (*Verdict, error) {
	if h == 0 {
		return nil, nil
	}
	defer raw.Rig_verdict_release(h)
	kind, refusal, cacheable := make([]int32, 1), make([]int32, 1), make([]int32, 1)
	reason, text := make([]unsafe.Pointer, 1), make([]unsafe.Pointer, 1)
	v := &Verdict{}
	err := call(func() raw.Enum_SS_rig_status {
		for _, st := range []raw.Enum_SS_rig_status{raw.Rig_verdict_get_kind(h, kind), raw.Rig_verdict_refusal(h, refusal),
			raw.Rig_verdict_cacheable(h, cacheable), raw.Rig_verdict_reason(h, reason), raw.Rig_verdict_to_string(h, text)} {
			if st != raw.RIG_OK {
				return st
			}
		}
		v.Kind, v.Refusal, v.Cacheable = int(kind[0]), int(refusal[0]), cacheable[0] != 0
		v.Reason, v.Text = cString(reason[0]), cString(text[0])
		return raw.RIG_OK
	})
	return v, err
}

// StaticVerdict is d's static verdict, or nil when the self-test is required.
func StaticVerdict(d *Device) (*Verdict, error) {
	defer runtime.KeepAlive(d)
	out := make([]uintptr, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_static_verdict(d.h, out) }); err != nil {
		return nil, err
	}
	return takeVerdict(out[0])
}

// StaticVerdictFor is the static table for a framework name; facts (nil: every fact unknown) answers
// its questions: 1 yes, 0 no, -1 could not be read.
func StaticVerdictFor(framework string, kind int, facts func(fact int) int) (*Verdict, error) {
	var h cgo.Handle
	st := &factState{fn: facts}
	if facts != nil {
		h = cgo.NewHandle(st)
		defer h.Delete()
	}
	out := make([]uintptr, 1)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_go_static_verdict_for(framework, kind, uintptr(h), out) })
	st.rethrow()
	if err != nil {
		return nil, err
	}
	return takeVerdict(out[0])
}

// ProbeOps are the ways the self-test talks to a device, written in Go (a backend or a test's double).
// Host memory comes from C.malloc unless the ops also implement HostAllocator.
type ProbeOps interface {
	RegisterHost(host []byte) error
	UnregisterHost(host []byte) error
	RoundTrip(host, into []byte) error // host to the device, then back into into
	Upload(host []byte) error          // the host-to-device half alone
}

// HostAllocator lets ProbeOps give their own host memory. It must be memory outside Go's heap
// (C.malloc, syscall.Mmap): rig keeps it across calls.
type HostAllocator interface {
	AllocHost(length int) ([]byte, error)
	FreeHost(host []byte) error
}

// Clock lets ProbeOps give the probe's clock, in nanoseconds.
type Clock interface {
	NowNs() uint64
}

// ProbeOptions are the probe's options; the zero value is rig's defaults.
type ProbeOptions struct {
	MinRelativeSpeed float64
	Log              func(message string)
}

// ProbeWith runs the self-test over ops. An op's error makes the verdict Inconclusive (its text goes to
// Log) unless it is a *Error of OutOfMemory or Interrupted, which ProbeWith returns; an op's panic is
// raised again once rig has returned.
func ProbeWith(ops ProbeOps, mapping, reference []byte, options *ProbeOptions) (*Verdict, error) {
	if options == nil {
		options = &ProbeOptions{}
	}
	st := &probeState{ops: ops, log: options.Log, allocs: map[uintptr][]byte{}}
	h := cgo.NewHandle(st)
	defer h.Delete()
	var logH cgo.Handle
	if options.Log != nil {
		logH = h
	}
	clock := 0
	if _, ok := ops.(Clock); ok {
		clock = 1
	}
	out := make([]uintptr, 1)
	err := call(func() raw.Enum_SS_rig_status {
		return raw.Rig_go_probe_with(uintptr(h), clock, mapping, reference, options.MinRelativeSpeed, uintptr(logH), out)
	})
	st.finish()
	if err != nil {
		return nil, err
	}
	return takeVerdict(out[0])
}

// Probe runs the capability check on a rig device.
func Probe(d *Device, mapping, reference []byte, options *ProbeOptions) (*Verdict, error) {
	defer runtime.KeepAlive(d)
	if options == nil {
		options = &ProbeOptions{}
	}
	st := &probeState{log: options.Log}
	var logH cgo.Handle
	if options.Log != nil {
		logH = cgo.NewHandle(st)
		defer logH.Delete()
	}
	out := make([]uintptr, 1)
	err := call(func() raw.Enum_SS_rig_status {
		return raw.Rig_go_probe(d.h, mapping, reference, options.MinRelativeSpeed, uintptr(logH), out)
	})
	st.finish()
	if err != nil {
		return nil, err
	}
	return takeVerdict(out[0])
}

// HostRegister registers host memory (outside Go's heap: mmap, C) with d's driver.
func HostRegister(d *Device, host []byte, access Access) error {
	defer runtime.KeepAlive(d)
	return call(func() raw.Enum_SS_rig_status { return raw.Rig_host_register(d.h, host, raw.Enum_SS_rig_access(access)) })
}

// HostUnregister unregisters the range starting at host[0].
func HostUnregister(d *Device, host []byte) error {
	defer runtime.KeepAlive(d)
	return call(func() raw.Enum_SS_rig_status { return raw.Rig_host_unregister(d.h, host) })
}

// HostIsRegistered says whether any registration overlaps host.
func HostIsRegistered(host []byte) (bool, error) {
	r := make([]int32, 1)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_host_is_registered(host, r) })
	return r[0] != 0, err
}

