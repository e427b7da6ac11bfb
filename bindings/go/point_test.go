package rig_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A timeline value where a point is meant (the mistake of issue 33: a submit's point, or a Submitted
// value, passed to the wrong wait) is refused by the compiler: a program doing so does not build.
func TestAValueWhereAPointIsMeantDoesNotCompile(t *testing.T) {
	module, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module wrongwait\n\ngo 1.19\n\nrequire rig.dev/rig v0.0.0\n\nreplace rig.dev/rig => "+module+"\n")
	write("main.go", `package main

import (
	"time"

	"rig.dev/rig"
)

func main() {
	a, _ := rig.MemoryDevice("A")
	v, _ := a.Submitted()
	a.WaitTimeout(v, time.Second)
}
`)
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "vet", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a uint64 passed to Device.WaitTimeout built:\n%s", out)
	}
	if !strings.Contains(string(out), "cannot use v (variable of type uint64) as rig.Point value") {
		t.Fatalf("the build failed, but not on the type:\n%s", out)
	}
	t.Logf("refused at compile time: %s", strings.TrimSpace(string(out)))
}
