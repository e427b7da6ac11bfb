// A program using the installed Go module rig.dev/rig: built with only PKG_CONFIG_PATH (and GOPROXY
// naming the installed module proxy), run with no LD_LIBRARY_PATH. Prints "hello, world", copied by
// rig and then loaded back by rig's loader from a safetensors file the program writes.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
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
	t, loaded, err := loadBack(a, out)
	if err != nil {
		return err
	}
	fmt.Printf("%s (rig %s, Go; loaded as %v %v)\n", loaded, rig.Version(), t.Dtype, t.Shape)
	return nil
}

// loadBack writes text as the one U8 tensor of a safetensors file and loads it onto d.
func loadBack(d *rig.Device, text []byte) (rig.Tensor, []byte, error) {
	dir, err := os.MkdirTemp("", "rig-hello")
	if err != nil {
		return rig.Tensor{}, nil, err
	}
	defer os.RemoveAll(dir)
	header := fmt.Sprintf(`{"text":{"dtype":"U8","shape":[%d],"data_offsets":[0,%d]}}`, len(text), len(text))
	file := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	file = append(append(file, header...), text...)
	path := filepath.Join(dir, "hello.safetensors")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		return rig.Tensor{}, nil, err
	}
	f, err := rig.OpenLoadFile(path)
	if err != nil {
		return rig.Tensor{}, nil, err
	}
	defer f.Close()
	t, err := f.Tensor(0)
	if err != nil {
		return rig.Tensor{}, nil, err
	}
	load, err := f.Load([]*rig.Device{d}, rig.Each)
	if err != nil {
		return t, nil, err
	}
	defer load.Close()
	if err := load.Wait(); err != nil {
		return t, nil, err
	}
	b, err := load.Buffer(0, 0)
	if err != nil {
		return t, nil, err
	}
	defer b.Close()
	out, err := b.Bytes()
	return t, out, err
}
