package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// handlesSignals says whether the process has installed a handler for
// SIGINT (bit 2 of SigCgt in /proc).
func handlesSignals(pid int) bool {
	return signalSet(pid, "SigCgt", syscall.SIGINT)
}

// signalSet says whether sig is in the signal set field (SigCgt, SigBlk, ...)
// of /proc/PID/status; false when it cannot be read.
func signalSet(pid int, field string, sig syscall.Signal) bool {
	mask, ok := statusMask(fmt.Sprintf("/proc/%d/status", pid), field)
	return ok && mask&(1<<(int(sig)-1)) != 0
}

// statusMask reads a hexadecimal signal set field of a /proc status file.
func statusMask(path, field string) (uint64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if hex, ok := strings.CutPrefix(line, field+":"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			return mask, err == nil
		}
	}
	return 0, false
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

// From the moment the process first catches SIGTERM (its first constructor,
// before Go's runtime starts: /proc shows the handler), a SIGTERM at any
// moment of its start-up ends the run with a report and 143. Before that
// moment only the kernel and the dynamic loader have run; docs/budgets.md states
// how long that takes (BenchmarkSignalWindow). Without the C hold, Go's
// runtime installs its own handler about a millisecond before trt-action's
// catching begins, and a SIGTERM in between ends the process without a
// report.
func TestSIGTERMAtAnyMomentOfStartUpEndsWithAReportAnd143(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Fatalf("this test reads /proc: %v", err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), slowMatrix)
	const runs = 41 // offsets 0, 0.25 ms, ..., 10 ms
	var failed []string
	for i := range runs {
		offset := time.Duration(i) * 10 * time.Millisecond / (runs - 1)
		report := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		cmd := command(dir, nil, "build", "--report", report)
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !signalSet(cmd.Process.Pid, "SigCgt", syscall.SIGTERM) && time.Now().Before(deadline) {
		}
		for start := time.Now(); time.Since(start) < offset; { // spin: a sleep is far coarser than the steps
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err, lost := waitAtMost(cmd, 10*time.Second)
		if lost {
			failed = append(failed, fmt.Sprintf("SIGTERM %v after the handler appeared was lost: the run went on", offset))
			continue
		}
		code := exitCode(err)
		data, readErr := os.ReadFile(report)
		if code != 143 || readErr != nil || !strings.Contains(string(data), `"interrupted":"SIGTERM`) {
			failed = append(failed, fmt.Sprintf("SIGTERM %v after the handler appeared: exit %d (%v), report: %v\n%s", offset, code, err, readErr, out.String()))
		}
	}
	if len(failed) > 0 {
		t.Errorf("%d of %d runs did not end with a report and 143:\n%s", len(failed), runs, strings.Join(failed, "\n"))
	}
}

// waitAtMost waits for cmd to exit; after d it kills it and reports the
// wait as timed out.
func waitAtMost(cmd *exec.Cmd, d time.Duration) (err error, timedOut bool) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err, false
	case <-time.After(d):
		_ = cmd.Process.Kill()
		return <-done, true
	}
}

// compile builds a test helper from testdata with the C or C++ compiler
// cgo uses ($CC or $CXX as a command with flags, else cc or g++). CI has
// one (it built the binary), so a missing one fails the test there.
func compile(t *testing.T, envVar, fallback, src, out string, flags ...string) {
	t.Helper()
	cmd := strings.Fields(os.Getenv(envVar))
	if len(cmd) == 0 {
		cmd = []string{fallback}
	}
	if _, err := exec.LookPath(cmd[0]); err != nil {
		if os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" {
			t.Fatalf("no compiler %q: %v", cmd[0], err)
		}
		t.Skipf("no compiler %q: %v", cmd[0], err)
	}
	args := append(append(cmd[1:], flags...), "-o", out, src)
	if msg, err := exec.Command(cmd[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("compiling %s: %v\n%s", src, err, msg)
	}
}

// A command the supervisor starts (nvidia-smi), a worker, the thread its
// build runs on, and a command the build starts all begin with no signal
// blocked, also when trt-action itself was started with every signal
// blocked (docs/budgets.md says so). Go forks a child with the forking
// thread's mask, and its threads keep the mask the process started with
// but for SIGINT, SIGTERM and the few it needs, so without
// internal/sigmask a worker had SIGUSR1, SIGHUP and the rest blocked, and
// so had every command. A C thread (TensorRT's) forks with its own mask,
// which it takes from the Go thread that started the build. Each mask is
// read by a C program that writes its own (sigmask_probe.c): a shell would
// not do (dash starts the commands it runs with none blocked, so before,
// this test read 0 whatever trt-action had passed on).
func TestWorkersAndTheCommandsTheyStartHaveNoSignalBlocked(t *testing.T) {
	tools := t.TempDir()
	backends := filepath.Join(tools, "lib")
	if err := os.Mkdir(backends, 0o755); err != nil {
		t.Fatal(err)
	}
	// The stand-in takes the place of the tensorrt-rtx backend.
	compile(t, "CXX", "g++", filepath.Join("testdata", "sigmask_backend.cc"), filepath.Join(backends, "libtam_rtx.so"), "-std=c++17", "-shared", "-fPIC")
	launcher := filepath.Join(tools, "blocked_exec")
	compile(t, "CC", "cc", filepath.Join("testdata", "blocked_exec.c"), launcher)
	// The commands: nvidia-smi, which the supervisor runs for --gpus, and
	// the one the stand-in's build starts, both writing their own mask.
	probe := filepath.Join(tools, "bin", "nvidia-smi")
	if err := os.Mkdir(filepath.Dir(probe), 0o755); err != nil {
		t.Fatal(err)
	}
	compile(t, "CC", "cc", filepath.Join("testdata", "sigmask_probe.c"), probe)

	for _, launch := range []struct {
		name string
		argv []string
	}{
		{"started with no signal blocked", []string{binary}},
		{"started with every signal blocked", []string{launcher, binary}},
	} {
		t.Run(launch.name, func(t *testing.T) {
			dir, masks := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(dir, "m.onnx"), "a stand-in backend reads no model")
			writeFile(t, filepath.Join(dir, "trt-builds.yml"), "version: 1\nbuilds:\n  - {name: masks, backend: tensorrt-rtx, onnx: m.onnx}\n")
			env := []string{"TRT_ACTION_BACKEND_DIR=" + backends, "TAM_TEST_SIGMASK_DIR=" + masks, "TAM_TEST_SIGMASK_PROBE=" + probe}
			cmd := command(dir, env, "build", "--report", "r.json", "--gpus", "0")
			cmd.Env[0] = "PATH=" + filepath.Dir(probe) + ":" + os.Getenv("PATH")
			cmd.Path, cmd.Args = launch.argv[0], append(launch.argv, cmd.Args[1:]...)
			out, err := cmd.CombinedOutput()
			if reason := readReport(t, filepath.Join(dir, "r.json")).Builds[0].Reason; reason != "sigmask backend builds no engine" {
				t.Fatalf("build: exit %d, reason %q, want the stand-in's own failure\n%s", exitCode(err), reason, out)
			}
			for _, who := range []string{"supervisor-command", "worker", "build-thread", "command"} {
				mask, ok := statusMask(filepath.Join(masks, who), "SigBlk")
				if !ok || mask != 0 {
					data, _ := os.ReadFile(filepath.Join(masks, who))
					t.Errorf("%s: SigBlk %q, want no signal blocked", who, strings.TrimSpace(string(data)))
				}
			}
		})
	}
}

// BenchmarkSignalCatchStart measures when, after exec.Cmd.Start returns
// (the kernel has started the new program), /proc first shows a SIGTERM
// handler: with cgo that is the hold's constructor, before which only the
// kernel and the dynamic loader have run; without cgo it is Go's runtime,
// whose handler kills until the package earlysignal's init (see
// BenchmarkSignalWindow). docs/budgets.md quotes the figures (BENCHMARKS.md
// has the runs):
//
//	go test ./cmd/trt-action -run '^$' -bench SignalCatchStart -benchtime 200x
func BenchmarkSignalCatchStart(b *testing.B) {
	var at []time.Duration
	for b.Loop() {
		cmd := command(b.TempDir(), nil, "version")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		started := time.Now()
		// Polling sleeps between looks, so that on a machine of few cores
		// the poll does not take the CPU from the process it watches.
		for !signalSet(cmd.Process.Pid, "SigCgt", syscall.SIGTERM) && time.Since(started) < 10*time.Second {
			time.Sleep(20 * time.Microsecond)
		}
		at = append(at, time.Since(started))
		_ = cmd.Wait()
	}
	slices.Sort(at)
	b.ReportMetric(float64(at[len(at)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(at[len(at)*9/10].Microseconds()), "p90-µs")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSignalWindow sends SIGTERMs from 0 to 5 ms (125 µs steps, in
// turn) after exec.Cmd.Start returns and counts those that ended the
// process by the default action (no report, no 143): fatal-% of all runs,
// window-µs the length of the fatal window that share amounts to (fatal-%
// of the 5 ms swept), fatal-max-µs the latest offset at which one did (on
// a busy machine, where the process waited for a core), and
// fatal-after-handler those sent after /proc already showed a SIGTERM
// handler (the window the hold closes: with cgo it must be 0).
// docs/budgets.md quotes the figures (BENCHMARKS.md has the runs):
//
//	go test ./cmd/trt-action -run '^$' -bench SignalWindow -benchtime 410x
//	TRT_ACTION_BIN=<a CGO_ENABLED=0 build> go test ./cmd/trt-action -run '^$' -bench SignalWindow -benchtime 410x
func BenchmarkSignalWindow(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trt-builds.yml"), []byte(slowMatrix), 0o644); err != nil {
		b.Fatal(err)
	}
	const steps = 41
	fatal, fatalAfterHandler, fatalMax := 0, 0, time.Duration(-1)
	for i := 0; b.Loop(); i++ {
		offset := time.Duration(i%steps) * 125 * time.Microsecond
		report := filepath.Join(dir, "r.json")
		_ = os.Remove(report)
		cmd := command(dir, nil, "build", "--report", report)
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		started, handler := time.Now(), false
		for time.Since(started) < offset {
			handler = handler || signalSet(cmd.Process.Pid, "SigCgt", syscall.SIGTERM)
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err, lost := waitAtMost(cmd, 10*time.Second)
		if lost {
			b.Fatalf("SIGTERM %v after the start was lost", offset)
		}
		if _, statErr := os.Stat(report); exitCode(err) != 143 || statErr != nil {
			fatal++
			fatalMax = max(fatalMax, offset)
			if handler {
				fatalAfterHandler++
			}
		}
	}
	b.ReportMetric(float64(fatal)*100/float64(b.N), "fatal-%")
	b.ReportMetric(float64(fatal)/float64(b.N)*float64(steps*125), "window-µs")
	b.ReportMetric(float64(fatalMax.Microseconds()), "fatal-max-µs")
	b.ReportMetric(float64(fatalAfterHandler), "fatal-after-handler")
	b.ReportMetric(0, "ns/op")
}
