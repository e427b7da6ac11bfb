package rig

// The Go side of rig.i's trampolines: functions exported to C, each recovering any panic so that none
// unwinds through librig's frames; the call that ran the callback panics again once rig has returned.

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// cString copies a C string rig gave (valid while its handle lives) into Go; "" for NULL.
func cString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	return C.GoString((*C.char)(p))
}

// cBytes is a Go slice over C memory rig owns, valid only during the callback that received it.
func cBytes(p unsafe.Pointer, n C.size_t) []byte {
	if p == nil || n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(p), int(n))
}

// cSize converts a length for cBytes (api.go has no import "C").
func cSize(n uint64) C.size_t { return C.size_t(n) }

// caught keeps the first panic of a callback until the rig call returns.
type caught struct {
	mu       sync.Mutex
	panicked bool
	value    interface{}
}

func (c *caught) keep(v interface{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.panicked {
		c.panicked, c.value = true, v
	}
}

// rethrow panics with the kept value, on the goroutine that made the rig call.
func (c *caught) rethrow() {
	c.mu.Lock()
	p, v := c.panicked, c.value
	c.panicked, c.value = false, nil
	c.mu.Unlock()
	if p {
		panic(v)
	}
}

type accessCall struct {
	caught
	fn func([]byte)
}

//export rigGoAccess
func rigGoAccess(handle C.uintptr_t, bytes unsafe.Pointer, length C.size_t) {
	c := cgo.Handle(handle).Value().(*accessCall)
	defer func() {
		if r := recover(); r != nil {
			c.keep(r)
		}
	}()
	c.fn(cBytes(bytes, length))
}

type kernelState struct {
	caught
	fn func([][]byte)
}

// span mirrors rig_span {void *data; size_t length;}.
type span struct {
	data   unsafe.Pointer
	length C.size_t
}

//export rigGoKernel
func rigGoKernel(handle C.uintptr_t, spans unsafe.Pointer, count C.size_t) {
	k := cgo.Handle(handle).Value().(*kernelState)
	defer func() {
		if r := recover(); r != nil {
			k.keep(r)
		}
	}()
	slots := make([][]byte, int(count))
	if count > 0 {
		for i, s := range unsafe.Slice((*span)(spans), int(count)) {
			slots[i] = cBytes(s.data, s.length)
		}
	}
	k.fn(slots)
}

type factState struct {
	caught
	fn func(int) int
}

//export rigGoFact
func rigGoFact(handle C.uintptr_t, fact C.int) (answer C.int) {
	f := cgo.Handle(handle).Value().(*factState)
	defer func() {
		if r := recover(); r != nil {
			f.keep(r)
			answer = -1
		}
	}()
	a := f.fn(int(fact))
	if a != 0 && a != 1 {
		return -1
	}
	return C.int(a)
}

type probeState struct {
	caught
	ops    ProbeOps
	log    func(string)
	mu2    sync.Mutex
	allocs map[uintptr][]byte // host memory given to rig, by address, until free_host
}

// The operations of rigGoProbeOp (go.i's RIG_GO_*).
const (
	opRegister = 1 + iota
	opUnregister
	opAlloc
	opFree
	opRoundTrip
	opUpload
)

var opNames = [...]string{"", "RegisterHost", "UnregisterHost", "AllocHost", "FreeHost", "RoundTrip", "Upload"}

// status is what rig gets for an op's error: a rig *Error's own status (OutOfMemory and Interrupted are
// the probe's own error; the rest make the verdict Inconclusive), any other error Driver. The error's
// text goes to the log: the verdict only names the op.
func (p *probeState) status(op int, err error) C.int {
	st := Driver
	var e *Error
	if errors.As(err, &e) && e.Status != OK {
		st = e.Status
	}
	if p.log != nil && st != OutOfMemory && st != Interrupted {
		p.log(fmt.Sprintf("%s returned %v", opNames[op], err))
	}
	return C.int(st)
}

//export rigGoProbeOp
func rigGoProbeOp(handle C.uintptr_t, op C.int, a, b unsafe.Pointer, length C.size_t, out *unsafe.Pointer) (st C.int) {
	p := cgo.Handle(handle).Value().(*probeState)
	defer func() {
		if r := recover(); r != nil {
			p.keep(r)
			st = C.int(Driver)
		}
	}()
	var err error
	switch op {
	case opRegister:
		err = p.ops.RegisterHost(cBytes(a, length))
	case opUnregister:
		err = p.ops.UnregisterHost(cBytes(a, length))
	case opRoundTrip:
		err = p.ops.RoundTrip(cBytes(a, length), cBytes(b, length))
	case opUpload:
		err = p.ops.Upload(cBytes(a, length))
	case opAlloc:
		var mem []byte
		if al, ok := p.ops.(HostAllocator); ok {
			mem, err = al.AllocHost(int(length))
			if err == nil && len(mem) < int(length) {
				err = fmt.Errorf("AllocHost(%d) gave %d bytes", int(length), len(mem))
			}
		} else {
			c := C.malloc(length)
			if c == nil {
				return C.int(OutOfMemory)
			}
			mem = cBytes(c, length)
		}
		if err == nil {
			addr := uintptr(unsafe.Pointer(&mem[0]))
			p.mu2.Lock()
			p.allocs[addr] = mem
			p.mu2.Unlock()
			*out = unsafe.Pointer(&mem[0])
		}
	case opFree:
		addr := uintptr(a)
		p.mu2.Lock()
		mem, ok := p.allocs[addr]
		delete(p.allocs, addr)
		p.mu2.Unlock()
		if !ok {
			err = fmt.Errorf("FreeHost of memory AllocHost did not give")
		} else if al, isAl := p.ops.(HostAllocator); isAl {
			err = al.FreeHost(mem)
		} else {
			C.free(a)
		}
	default:
		return C.int(InvalidArgument)
	}
	if err != nil {
		return p.status(int(op), err)
	}
	return C.int(OK)
}

// finish frees what the probe did not, then raises a kept panic.
func (p *probeState) finish() {
	p.mu2.Lock()
	left := p.allocs
	p.allocs = nil
	p.mu2.Unlock()
	for _, mem := range left {
		if al, ok := p.ops.(HostAllocator); ok {
			al.FreeHost(mem)
		} else {
			C.free(unsafe.Pointer(&mem[0]))
		}
	}
	p.rethrow()
}

//export rigGoProbeNow
func rigGoProbeNow(handle C.uintptr_t) (ns C.uint64_t) {
	p := cgo.Handle(handle).Value().(*probeState)
	defer func() {
		if r := recover(); r != nil {
			p.keep(r)
			ns = 0
		}
	}()
	return C.uint64_t(p.ops.(Clock).NowNs())
}

//export rigGoLog
func rigGoLog(handle C.uintptr_t, message *C.char) {
	p := cgo.Handle(handle).Value().(*probeState)
	defer func() {
		if r := recover(); r != nil {
			p.keep(r)
		}
	}()
	p.log(C.GoString(message))
}

//export rigGoRelease
func rigGoRelease(handle C.uintptr_t) {
	h := cgo.Handle(handle)
	f := h.Value().(func())
	h.Delete()
	// a release runs on rig's thread, after the call that made the buffer returned: there is no call to
	// panic again in, so a panic ends here rather than unwinding through librig
	defer func() { recover() }()
	f()
}
