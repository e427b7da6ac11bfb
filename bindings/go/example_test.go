package rig_test

import (
	"fmt"

	"rig.dev/rig"
)

// The seed's program: B's copy reads x through a borrow, so it follows A's copy that wrote x; no point
// or event is named.
func ExampleSubmit() {
	a, _ := rig.MemoryDevice("A")
	b, _ := rig.MemoryDevice("B")
	defer a.Close()
	defer b.Close()
	src, _ := rig.WrapBytes([]byte("hello, world"), true)
	x, _ := rig.CreateBuffer(a, 12, rig.MemDevice)
	y, _ := rig.CreateBuffer(b, 12, rig.MemDevice)
	srcOnA, _ := src.Borrow(a)
	xOnB, _ := x.Borrow(b)
	rig.Submit(a, []rig.Part{rig.Copy(0, 1)}, []rig.Slot{{Buffer: srcOnA, Access: rig.Read}, {Buffer: x, Access: rig.Write}})
	rig.Submit(b, []rig.Part{rig.Copy(0, 1)}, []rig.Slot{{Buffer: xOnB, Access: rig.Read}, {Buffer: y, Access: rig.Write}})
	out, err := y.Bytes()
	fmt.Println(string(out), err)
	// Output: hello, world <nil>
}
