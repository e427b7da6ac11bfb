package rig_test

// The Go binding's test (meson: binding-go, `go test` in the module): the seed's hello-world ordering
// program, rig's errors as *rig.Error with rig's message, waits that time out (a Duration) or end with
// their context, zero-copy buffers over C memory, callbacks written in Go, and probe_with over Go ops of
// a double.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"runtime"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"rig.dev/rig"
)

// must turns a failed call into a test failure (a panic the testing package reports with the error).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestHelloWorld(t *testing.T) {
	a := must(rig.MemoryDevice("A"))
	b := must(rig.MemoryDevice("B"))
	src := must(rig.WrapBytes([]byte("hello, world"), true))
	x := must(rig.CreateBuffer(a, 12, rig.MemDevice))
	y := must(rig.CreateBuffer(b, 12, rig.MemDevice))
	// A's copy writes x; B's copy reads x through a borrow, so it follows A's: no point is named.
	must(rig.Submit(a, []rig.Part{rig.Copy(0, 1)},
		[]rig.Slot{{must(src.Borrow(a)), rig.Read}, {x, rig.Write}}))
	must(rig.Submit(b, []rig.Part{rig.Copy(0, 1)},
		[]rig.Slot{{must(x.Borrow(b)), rig.Read}, {y, rig.Write}}))
	out := make([]byte, 12)
	if err := y.ReadInto(0, out); err != nil {
		t.Fatal(err)
	}
	t.Log(string(out))
	println(string(out))
	if string(out) != "hello, world" {
		t.Fatalf("y holds %q", out)
	}
	for _, d := range []*rig.Device{a, b} {
		if v := must(d.Submitted()); v != 1 {
			t.Fatalf("device submitted %d values, want 1", v)
		}
	}
}

func TestErrors(t *testing.T) {
	a := must(rig.MemoryDevice("A"))
	x := must(rig.CreateBuffer(a, 12, rig.MemDevice))
	_, err := x.View(8, 8)
	var e *rig.Error
	if !errors.As(err, &e) || e.Status != rig.InvalidArgument || !strings.Contains(e.Message, "leaves") {
		t.Fatalf("out-of-range view: %v", err)
	}
	t.Logf("out-of-range view: %v", err)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = x.Len()
	if !errors.Is(err, &rig.Error{Status: rig.InvalidHandle}) || !errors.As(err, &e) || e.Message == "" {
		t.Fatalf("released buffer: %v", err)
	}
	t.Logf("released buffer: %v", err)
	ro := must(rig.WrapBytes([]byte("abcd"), true))
	if err := ro.WriteFrom(0, []byte("z")); !errors.Is(err, &rig.Error{Status: rig.InvalidArgument}) {
		t.Fatalf("write into read-only bytes: %v", err)
	}
}

func TestWrapCAndExport(t *testing.T) {
	a := must(rig.MemoryDevice("A"))
	m, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	w := must(rig.WrapC(m[:8], false))
	must(rig.Submit(a, []rig.Part{rig.FillPart{Dst: 0, Length: rig.Whole, Byte: 'q'}}, []rig.Slot{{must(w.Borrow(a)), rig.Write}}))
	if err := w.Read(func([]byte) {}); err != nil { // a host read follows the fill (rule 5)
		t.Fatal(err)
	}
	if string(m[:8]) != "qqqqqqqq" {
		t.Fatalf("the wrapped mmap holds %q", m[:8])
	}
	e := must(w.Export())
	if string(e) != "qqqqqqqq" {
		t.Fatalf("export sees %q", e)
	}
	w.Close()
}

func TestFinalizersRelease(t *testing.T) {
	// Handles dropped without Close are released by their finalizers; the device they used still works.
	a := must(rig.MemoryDevice("A"))
	for i := 0; i < 200; i++ {
		x := must(rig.CreateBuffer(a, 64, rig.MemDevice))
		must(rig.Submit(a, []rig.Part{rig.FillPart{Dst: 0, Length: rig.Whole, Byte: byte(i)}}, []rig.Slot{{x, rig.Write}}))
	}
	runtime.GC()
	runtime.GC()
	y := must(rig.CreateBuffer(a, 4, rig.MemDevice))
	must(rig.Submit(a, []rig.Part{rig.FillPart{Dst: 0, Length: rig.Whole, Byte: 9}}, []rig.Slot{{y, rig.Write}}))
	if got := must(y.Bytes()); string(got) != "\x09\x09\x09\x09" {
		t.Fatalf("after finalizers ran: %q", got)
	}
	if v := must(a.Submitted()); v != 201 {
		t.Fatalf("submitted %d, want 201", v)
	}
}

func TestCallbacks(t *testing.T) {
	a := must(rig.MemoryDevice("A"))
	buf := must(rig.CreateBuffer(a, 8, rig.MemDevice))
	if err := buf.Write(func(b []byte) { copy(b, "ABCDEFGH") }); err != nil {
		t.Fatal(err)
	}
	var seen []byte
	if err := buf.Read(func(b []byte) { seen = append([]byte(nil), b...) }); err != nil {
		t.Fatal(err)
	}
	if string(seen) != "ABCDEFGH" {
		t.Fatalf("read saw %q", seen)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("a panic in a read callback is raised by Read: got %v", r)
			}
		}()
		buf.Read(func([]byte) { panic("boom") })
	}()

	src := must(rig.WrapBytes([]byte("abcdefgh"), false))
	dst := must(rig.CreateBuffer(a, 8, rig.MemDevice))
	upper := rig.HostKernel{Fn: func(slots [][]byte) { copy(slots[1], bytes.ToUpper(slots[0])) }}
	must(rig.Submit(a, []rig.Part{upper}, []rig.Slot{{must(src.Borrow(a)), rig.Read}, {dst, rig.Write}}))
	if got := must(dst.Bytes()); string(got) != "ABCDEFGH" {
		t.Fatalf("host kernel wrote %q", got)
	}
	func() {
		defer func() {
			if r := recover(); r != "kernel" {
				t.Fatalf("a host kernel's panic is raised by Submit: got %v", r)
			}
		}()
		rig.Submit(a, []rig.Part{rig.HostKernel{Fn: func([][]byte) { panic("kernel") }}}, []rig.Slot{{dst, rig.Write}})
	}()
}

// wrongBytes is a device double whose round trip returns one wrong byte.
type wrongBytes struct{ registered int }

func (w *wrongBytes) RegisterHost([]byte) error   { w.registered++; return nil }
func (w *wrongBytes) UnregisterHost([]byte) error { w.registered--; return nil }
func (w *wrongBytes) RoundTrip(host, into []byte) error {
	copy(into, host)
	into[0] ^= 0xff
	return nil
}
func (w *wrongBytes) Upload([]byte) error { return nil }

type faithful struct{ wrongBytes }

func (f *faithful) RoundTrip(host, into []byte) error { copy(into, host); return nil }

type refusing struct{ faithful }

func (r *refusing) RegisterHost([]byte) error { return errors.New("driver said no") }

func TestProbeWith(t *testing.T) {
	const length = 256 << 10
	m, err := syscall.Mmap(-1, 0, length, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	if _, err := rand.Read(m); err != nil {
		t.Fatal(err)
	}
	reference := append([]byte(nil), m...)
	var logs []string
	ops := &wrongBytes{}
	v := must(rig.ProbeWith(ops, m, reference, &rig.ProbeOptions{Log: func(s string) { logs = append(logs, s) }}))
	t.Logf("verdict: %v (%d log lines)", v, len(logs))
	if v.Kind != rig.VerdictRefused || v.Refusal != rig.RefusalWrongBytes || !v.Cacheable {
		t.Fatalf("wrong-bytes double: %v", v)
	}
	if ops.registered != 0 {
		t.Fatalf("%d windows left registered", ops.registered)
	}
	v = must(rig.ProbeWith(&faithful{}, m, reference, nil))
	if v.Kind == rig.VerdictRefused {
		t.Fatalf("faithful double refused: %v", v)
	}
	logs = nil
	v = must(rig.ProbeWith(&refusing{}, m, reference, &rig.ProbeOptions{Log: func(s string) { logs = append(logs, s) }}))
	if v.Kind != rig.VerdictInconclusive || !strings.Contains(strings.Join(logs, "\n"), "driver said no") {
		t.Fatalf("an op's error: %v, log %q", v, logs)
	}
	if _, err := rig.ProbeWith(&wrongBytes{}, m, reference[1:], nil); !errors.Is(err, &rig.Error{Status: rig.InvalidArgument}) {
		t.Fatalf("map and reference of different lengths: %v", err)
	}
	sv := must(rig.StaticVerdictFor("Vulkan", 2, func(int) int { return 0 }))
	if sv == nil || sv.Refusal != rig.RefusalKernelHazard {
		t.Fatalf("Vulkan: %v", sv)
	}
}

// busyDevice is a device whose value 1 stays unreached for a while: a copy on the CUDA double (a fake
// libcuda, RIG_CUDA_LIBRARY) that sleeps FAKECUDA_COPY_DELAY_US in its stream (meson's binding-go sets
// both). Memory devices run their work inline, so no wait on one can time out.
func busyDevice(t *testing.T) *rig.Device {
	if os.Getenv("RIG_CUDA_LIBRARY") == "" || os.Getenv("FAKECUDA_COPY_DELAY_US") == "" {
		t.Skip("SKIP: no CUDA double with a copy delay (RIG_CUDA_LIBRARY, FAKECUDA_COPY_DELAY_US) to time out on")
	}
	d := must(rig.OpenDevice("cuda:0"))
	x := must(rig.CreateBuffer(d, 4096, rig.MemDevice))
	y := must(rig.CreateBuffer(d, 4096, rig.MemDevice))
	must(rig.Submit(d, []rig.Part{rig.Copy(0, 1)}, []rig.Slot{{x, rig.Read}, {y, rig.Write}}))
	return d
}

func TestWaitsTimeOutAndFollowTheirContext(t *testing.T) {
	a := busyDevice(t)
	p1 := must(a.Point(1))
	if err := a.WaitTimeout(p1+1, 0); !errors.Is(err, &rig.Error{Status: rig.InvalidArgument}) {
		t.Fatalf("a wait past the submitted value: %v", err)
	}
	start := time.Now()
	err := a.WaitTimeout(p1, 20*time.Millisecond)
	if !errors.Is(err, &rig.Error{Status: rig.Timeout}) {
		t.Fatalf("a held value, waited 20ms: %v", err)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Fatalf("the wait timed out after %v, before its 20ms", waited)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err = a.Wait(ctx, p1)
	var e *rig.Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &e) || e.Status != rig.Timeout {
		t.Fatalf("a wait past its context's deadline: %v", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel2)
	err = rig.WaitPoint(ctx2, p1)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, &rig.Error{Status: rig.Interrupted}) {
		t.Fatalf("a wait whose context was canceled: %v", err)
	}
	t.Logf("deadline: %v; cancel: %v", ctx.Err(), err)
	if err := a.Wait(context.Background(), p1); err != nil {
		t.Fatalf("the value, once the copy is done: %v", err)
	}
	if err := rig.WaitPointTimeout(p1, rig.Forever); err != nil {
		t.Fatal(err)
	}
}

func TestStringsNameTheObject(t *testing.T) {
	a := must(rig.MemoryDevice("A"))
	if s := a.String(); !strings.HasPrefix(s, "rig.Device(0x") || strings.Contains(s, "closed") {
		t.Fatalf("an open device prints as %q", s)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if s := a.String(); !strings.HasSuffix(s, ", closed)") {
		t.Fatalf("a closed device prints as %q", s)
	}
	if _, err := a.Submitted(); !errors.Is(err, &rig.Error{Status: rig.InvalidHandle}) {
		t.Fatalf("a closed device: %v", err)
	}
	if rig.Timeout.String() != "RIG_TIMEOUT" {
		t.Fatalf("Timeout prints as %q", rig.Timeout.String())
	}
}
