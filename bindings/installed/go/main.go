// A program using the installed Go module rig.dev/rig: built with only PKG_CONFIG_PATH (and GOPROXY
// naming the installed module proxy), run with no LD_LIBRARY_PATH. Prints "hello, world".
package main

import (
	"fmt"
	"os"
	"time"

	"rig.dev/rig"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
}

func run() error {
	a, err := rig.MemoryDevice("A")
	if err != nil {
		return err
	}
	defer a.Close()
	src, err := rig.WrapBytes([]byte("hello, world"), true)
	if err != nil {
		return err
	}
	x, err := rig.CreateBuffer(a, 12, rig.MemDevice)
	if err != nil {
		return err
	}
	onA, err := src.Borrow(a)
	if err != nil {
		return err
	}
	p, err := rig.Submit(a, []rig.Part{rig.Copy(0, 1)}, []rig.Slot{{Buffer: onA, Access: rig.Read}, {Buffer: x, Access: rig.Write}})
	if err != nil {
		return err
	}
	if err := a.WaitTimeout(p, time.Second); err != nil {
		return err
	}
	out, err := x.Bytes()
	if err != nil {
		return err
	}
	fmt.Printf("%s (rig %s, Go)\n", out, rig.Version())
	return nil
}
