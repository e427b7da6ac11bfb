package rig_test

// rig's diagnostics in Go: RIG_LOAD_TRACE=1's milestones (said at LogDebug) reach a func given to
// rig.SetLog and a *log.Logger given to rig.LogTo, nothing below the level asked for, and stderr again
// after rig.LogToStderr. rig reads RIG_LOAD_TRACE once per process, so each case runs this test binary
// again as a child (RIG_GO_LOG_CASE names the case, and the test runs it there) with RIG_LOAD_TRACE=1.

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"rig.dev/rig"
)

// logChild is the child's side: one case, its lines on stdout as "level|message".
func logChild(t *testing.T, which string) {
	var mu sync.Mutex
	var heard []string
	hear := func(level rig.LogLevel, message string) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, fmt.Sprintf("%s|%s", level, message))
	}
	var logged bytes.Buffer
	switch which {
	case "func":
		ok(t, rig.SetLog(rig.LogDebug, hear))
	case "warning":
		ok(t, rig.SetLog(rig.LogWarning, hear))
	case "logger":
		ok(t, rig.LogTo(log.New(&logged, "app: ", 0), rig.LogDebug))
	case "stderr":
		ok(t, rig.SetLog(rig.LogDebug, hear))
		ok(t, rig.LogToStderr(rig.LogDebug))
	case "panics":
		ok(t, rig.SetLog(rig.LogDebug, func(rig.LogLevel, string) { panic("a sink that panics") }))
	}
	f, err := rig.OpenLoadFile(writeSafetensors(t))
	ok(t, err)
	defer f.Close()
	d, err := rig.MemoryDevice("log")
	ok(t, err)
	defer d.Close()
	load, err := f.Load([]*rig.Device{d}, rig.Each)
	ok(t, err)
	ok(t, load.Wait())
	ok(t, load.Close())
	mu.Lock()
	defer mu.Unlock()
	for _, line := range heard {
		fmt.Println(line)
	}
	fmt.Print(logged.String())
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runLogChild runs one case in a child (this test again) and returns its stdout lines (the test harness's own left out)
// and its stderr.
func runLogChild(t *testing.T, which string) ([]string, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "RIG_GO_LOG_CASE="+which, "RIG_LOAD_TRACE=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s\n%s", which, err, out.String(), errOut.String())
	}
	var lines []string
	for _, line := range strings.Split(out.String(), "\n") {
		if line != "" && line != "PASS" && !strings.HasPrefix(line, "=== RUN") && !strings.HasPrefix(line, "--- PASS") && !strings.HasPrefix(line, "ok ") {
			lines = append(lines, line)
		}
	}
	return lines, errOut.String()
}

// inChild runs the case and says true where this process is a test's child.
func inChild(t *testing.T) bool {
	which := os.Getenv("RIG_GO_LOG_CASE")
	if which != "" {
		logChild(t, which)
	}
	return which != ""
}

func TestALoadsTraceReachesAGoFuncAtDebug(t *testing.T) {
	if inChild(t) {
		return
	}
	lines, stderr := runLogChild(t, "func")
	if strings.Contains(stderr, "rig load trace") {
		t.Errorf("the trace still reached stderr:\n%s", stderr)
	}
	planned, done := false, false
	for _, line := range lines {
		if !strings.HasPrefix(line, "debug|rig load trace: ") {
			t.Errorf("not a debug trace line: %q", line)
		}
		planned = planned || strings.HasSuffix(line, "ms  planned")
		done = done || strings.HasSuffix(line, "ms  done")
	}
	if !planned || !done {
		t.Errorf("milestones missing: %q", lines)
	}
}

func TestALevelAboveDebugHearsNoTrace(t *testing.T) {
	if inChild(t) {
		return
	}
	lines, stderr := runLogChild(t, "warning")
	if len(lines) != 0 || strings.Contains(stderr, "rig load trace") {
		t.Errorf("heard %q, stderr %q", lines, stderr)
	}
}

func TestALoadsTraceReachesALogLogger(t *testing.T) {
	if inChild(t) {
		return
	}
	lines, _ := runLogChild(t, "logger")
	if len(lines) == 0 {
		t.Fatal("the logger heard nothing")
	}
	for _, line := range lines {
		if !strings.HasPrefix(line, "app: rig debug: rig load trace: ") {
			t.Errorf("not the logger's line: %q", line)
		}
	}
}

func TestLogToStderrRestoresTheDefault(t *testing.T) {
	if inChild(t) {
		return
	}
	lines, stderr := runLogChild(t, "stderr")
	if len(lines) != 0 || !strings.Contains(stderr, "ms  planned\n") {
		t.Errorf("heard %q, stderr %q", lines, stderr)
	}
}

func TestAPanickingSinkIsDroppedAndTheLoadCompletes(t *testing.T) {
	if inChild(t) {
		return
	}
	if lines, _ := runLogChild(t, "panics"); len(lines) != 0 {
		t.Errorf("heard %q", lines)
	}
}

func TestAnUnknownLevelIsRefused(t *testing.T) {
	err := rig.SetLog(rig.LogLevel(9), func(rig.LogLevel, string) {})
	if err == nil || err.(*rig.Error).Status != rig.InvalidArgument {
		t.Fatalf("SetLog(9): %v", err)
	}
	if err := rig.LogTo(nil, rig.LogDebug); err == nil {
		t.Fatal("LogTo(nil) accepted")
	}
}
