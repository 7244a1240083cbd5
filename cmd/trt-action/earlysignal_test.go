package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// handlesSignals says whether the process has installed handlers for
// SIGINT (bit 2 of SigCgt in /proc): the Go runtime does that as it
// starts, a millisecond or so before trt-action's own catching begins.
func handlesSignals(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if hex, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			return err == nil && mask&(1<<(int(syscall.SIGINT)-1)) != 0
		}
	}
	return false
}

// bytesRead is how many bytes the process has read (rchar in /proc's io),
// or -1 when it cannot be read.
func bytesRead(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// A signal while a large matrix loads (before any build starts) must still
// end the run with a report and 130/143, not kill the process outright.
func TestASignalInTheFirstMillisecondsStillEndsWithAReport(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Fatalf("this test reads /proc: %v", err)
	}
	dir := t.TempDir()
	var m strings.Builder
	m.WriteString("version: 1\ndefaults: {backend: sim, sim: {step: 2ms}}\nbuilds:\n")
	const builds = 50000 // loading takes far longer than the wait below (0.4 s on a quiet machine)
	for i := range builds {
		fmt.Fprintf(&m, "  - {name: b%d}\n", i)
	}
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), m.String())
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		cmd := command(dir, nil, "build", "--report", "r.json")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !handlesSignals(cmd.Process.Pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
		// Once the matrix file has been read, every package's init (and so
		// earlysignal's) has run, and parsing 50,000 builds is still ahead:
		// the signal lands while the matrix loads, however loaded the machine.
		for bytesRead(cmd.Process.Pid) < int64(m.Len()) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
		_ = cmd.Process.Signal(c.sig)
		if code := exitCode(cmd.Wait()); code != c.code {
			t.Fatalf("%v in the first milliseconds: exit %d, want %d", c.sig, code, c.code)
		}
		r := readReport(t, filepath.Join(dir, "r.json"))
		if r.Complete || !strings.HasPrefix(r.Interrupted, sigName(c.sig)) || len(r.Builds) != builds {
			t.Errorf("report: complete=%v interrupted=%q builds=%d", r.Complete, r.Interrupted, len(r.Builds))
		}
		for _, b := range r.Builds[:10] {
			if b.Status != "cancelled" {
				t.Errorf("%s: %s; a build must not start after the signal", b.Name, b.Status)
			}
		}
		os.Remove(filepath.Join(dir, "r.json"))
	}
}

func sigName(s syscall.Signal) string {
	if s == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}
