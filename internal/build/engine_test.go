package build

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// Issue 13 item 18: kill -9 of a run leaves "<engine>.partial-<pid>-<n>";
// the next run of that engine removes it, but not a live writer's.
func TestARunRemovesPartialEnginesOfDeadRuns(t *testing.T) {
	dir := t.TempDir()
	b := simBuild(dir, "mlp", nil)
	finished := exec.Command("true")
	if err := finished.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	stale := fmt.Sprintf("%s.partial-%d-0", b.Engine, finished.Process.Pid)
	busy := fmt.Sprintf("%s.partial-%d-0", b.Engine, live.Process.Pid)
	for _, p := range []string{stale, busy} {
		if err := os.WriteFile(p, []byte("half an engine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep := runReport([]matrix.Build{b}, testOptions(t), nil)
	if got := rep.Builds[0]; got.Status != report.StatusOK {
		t.Fatalf("build %s: %s", got.Status, got.Reason)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead run's partial engine is still there (%v)", err)
	}
	if _, err := os.Stat(busy); err != nil {
		t.Errorf("a live process's partial engine was removed: %v", err)
	}
}

// Issue 11 §4: a link at an engine path is never followed to write
// elsewhere, nor replaced; the build fails before its worker starts.
func TestALinkAtAnEnginePathIsRefused(t *testing.T) {
	dir := t.TempDir()
	b := simBuild(dir, "linked", nil)
	elsewhere := filepath.Join(dir, "elsewhere.engine")
	if err := os.WriteFile(elsewhere, []byte("someone else's engine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, b.Engine); err != nil {
		t.Fatal(err)
	}
	rep := runReport([]matrix.Build{b}, testOptions(t), nil)
	got := rep.Builds[0]
	if got.Status != report.StatusFailed || !strings.Contains(got.Reason, "is a symbolic link") || got.Callbacks != 0 {
		t.Errorf("build %s after %d callbacks: %q; want failed before it ran, naming the link", got.Status, got.Callbacks, got.Reason)
	}
	if data, _ := os.ReadFile(elsewhere); string(data) != "someone else's engine" {
		t.Errorf("the link's target was written: %q", data)
	}
	if info, err := os.Lstat(b.Engine); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced (%v)", err)
	}
}

// A build without an engine path (a simulated stand-in for a real build)
// runs and keeps nothing, anywhere.
func TestABuildWithoutAnEnginePathKeepsNoEngine(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b := simBuild(dir, "stand-in", func(b *matrix.Build) { b.Engine = "" })
	rep := runReport([]matrix.Build{b}, testOptions(t), nil)
	got := rep.Builds[0]
	if got.Status != report.StatusOK || got.Engine != nil {
		t.Errorf("build %s (%s), engine %+v; want ok without an engine", got.Status, got.Reason, got.Engine)
	}
	for _, d := range []string{dir, tmp} {
		if entries, _ := os.ReadDir(d); len(entries) > 0 {
			t.Errorf("%s holds %d files, want none (the stand-in's engine must go)", d, len(entries))
		}
	}
}

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// The timing cache's temporary that a killed worker left (the backend
// writes it as <path>.partial-<pid>-<n>, native/backends/files.h) is
// removed before the next build that names that timing cache; one of a
// live process stays. Before, the backend named it <path>.tmp.<pid> and
// nothing ever removed it.
func TestStaleTimingCacheTemporariesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	b := simBuild(dir, "tc", func(b *matrix.Build) { b.TimingCache = filepath.Join(dir, "caches", "t.cache") })
	if err := os.MkdirAll(filepath.Dir(b.TimingCache), 0o755); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("%s.partial-%d-1", b.TimingCache, deadPID(t))
	live := fmt.Sprintf("%s.partial-%d-1", b.TimingCache, os.Getpid())
	for _, p := range []string{stale, live} {
		if err := os.WriteFile(p, []byte("half a timing cache"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep := runReport([]matrix.Build{b}, testOptions(t), nil)
	if got := rep.Builds[0]; got.Status != report.StatusOK {
		t.Fatalf("%s: %s", got.Status, got.Reason)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a killed worker's timing cache temporary is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's temporary was removed: %v", err)
	}
}
