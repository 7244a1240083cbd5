package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// A run killed with SIGKILL writes nothing more: what it wrote before must
// say what was under way, and what it left in the temporary folder is
// removed by the next run.

// python3 for a script build's command; CI has one.
func python3(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" {
			t.Fatalf("no python3: %v", err)
		}
		t.Skipf("no python3: %v", err)
	}
	return py
}

// started is a trt-action run in the background.
type started struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	report string
}

func startRun(t *testing.T, dir string, env []string, reportName string, args ...string) *started {
	t.Helper()
	s := &started{out: &syncBuffer{}, report: filepath.Join(dir, reportName)}
	s.cmd = command(dir, env, append([]string{args[0], "--report", s.report}, args[1:]...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	})
	return s
}

// waitRunning waits until the run's report says its first build is running.
func (s *started) waitRunning(t *testing.T) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		data, err := os.ReadFile(s.report) // written whole, by a rename
		var r report.Report
		if err == nil && json.Unmarshal(data, &r) == nil && len(r.Builds) > 0 && r.Builds[0].Status == report.StatusRunning {
			return
		}
	}
	t.Fatalf("%s never said its build is running\n%s", s.report, s.out.String())
}

// kill9 kills the run's trt-action process, which writes nothing more.
func (s *started) kill9(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// tempFolders is what is in the temporary folder tmp, by name.
func tempFolders(t *testing.T, tmp string) []string {
	t.Helper()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestAKilledRunsReportSaysWhatRanAndTheNextRunRemovesItsFolders(t *testing.T) {
	py := python3(t)
	// A short path: the hook's socket goes in it, and a socket's path has
	// at most 107 bytes.
	tmp, err := os.MkdirTemp("", "tk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	env := []string{"TMPDIR=" + tmp}
	dir := t.TempDir()
	sleeper := []string{"--", py, "-c", "import time; time.sleep(300)"}

	// A run: build of a program that sleeps, killed.
	killed := startRun(t, dir, env, "killed.json", append([]string{"run", "--name", "sleeper"}, sleeper...)...)
	killed.waitRunning(t)
	left := tempFolders(t, tmp)
	if len(left) != 2 || !slices.ContainsFunc(left, func(n string) bool { return strings.HasPrefix(n, "trt-action-hook-") }) ||
		!slices.ContainsFunc(left, func(n string) bool { return strings.HasPrefix(n, "trt-action-script-") }) {
		t.Fatalf("a running script build's temporary folders: %v, want the hook's and the socket's", left)
	}
	killed.kill9(t)
	r := readReport(t, killed.report)
	if b := r.Builds[0]; r.Complete || b.Status != report.StatusRunning {
		t.Errorf("the killed run's report: complete=%v, %s %s; want its build running", r.Complete, b.Name, b.Status)
	}
	if got := tempFolders(t, tmp); !slices.Equal(got, left) {
		t.Fatalf("after the kill: %v, want %v left", got, left)
	}

	// Another run: build, alive.
	live := startRun(t, dir, env, "live.json", append([]string{"run", "--name", "alive"}, sleeper...)...)
	live.waitRunning(t)
	var liveFolders []string
	for _, n := range tempFolders(t, tmp) {
		if !slices.Contains(left, n) {
			liveFolders = append(liveFolders, n)
		}
	}
	if len(liveFolders) != 2 {
		t.Fatalf("the live run's folders: %v", liveFolders)
	}

	// A matrix build, killed: its start removed the first run's folders,
	// not the live run's.
	writeFile(t, filepath.Join(dir, "slow.yml"), "version: 1\nbuilds:\n  - {name: slow, backend: sim, sim: {step: 50ms}, engine: out/slow.engine}\n")
	matrix := startRun(t, dir, env, "matrix.json", "build", "slow.yml")
	matrix.waitRunning(t)
	if got := tempFolders(t, tmp); !slices.Equal(got, liveFolders) {
		t.Errorf("once the next run started: %v, want only the live run's %v", got, liveFolders)
	}
	matrix.kill9(t)
	r = readReport(t, matrix.report)
	if b := r.Builds[0]; r.Complete || b.Status != report.StatusRunning {
		t.Errorf("the killed matrix run's report: complete=%v, %s %s; want its build running", r.Complete, b.Name, b.Status)
	}

	// The live run ends as any run does, and takes its own folders.
	_ = live.cmd.Process.Signal(syscall.SIGINT)
	_ = live.cmd.Wait()
	if got := tempFolders(t, tmp); len(got) != 0 {
		t.Errorf("after the live run ended: %v left", got)
	}
}
