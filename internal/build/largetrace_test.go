package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// largeTraceRepeat copies of the built-in tree make a trace file of
// 1,126,825 callbacks (91 MB), the size of the issue's.
const largeTraceRepeat = 175

// largeTrace writes the built-in tree largeTraceRepeat times into one
// trace file.
func largeTrace(t testing.TB) string {
	t.Helper()
	one, err := os.ReadFile(filepath.Join("..", "trace", "default.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "large.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for range largeTraceRepeat {
		if _, err := f.Write(one); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A build budget stops a build of a large trace file at a callback: the
// file is played as it is read, so the worker is replaying, not still
// reading, when the budget runs out. Before, it read the whole file first
// (6 s here, far longer under the race detector) and the grace ran out:
// killed. The bound on the stop: the stop reaches the worker through its
// stdin, the simulator sees the cancel at its next callback (at most one
// 1,024-line chunk of reading away, about half a millisecond, a few under
// the race detector), and the worker hands its last events on within its
// 10 ms drain; here it takes 2 to 4 ms (DeadlineToEnd: 2 to 25 ms), 4 to
// 10 ms under the race detector. One second leaves room for a loaded
// machine and stays under the grace, so a pass proves the build ended at a
// callback.
func TestABudgetStopsALargeTraceFileBuildAtACallback(t *testing.T) {
	const budget, grace, bound = 500 * time.Millisecond, 3 * time.Second, time.Second
	b := simBuild(t.TempDir(), "large", func(b *matrix.Build) {
		b.Sim.Trace, b.Sim.Step, b.Sim.Fast = largeTrace(t), 0, true
		b.Budgets.Build, b.Budgets.Grace = budget, grace
	})
	opts := testOptions(t)
	// Under the race detector a process sleeps a second as it exits, to let
	// late reports through; the worker's exit is part of the stop here.
	opts.WorkerEnv = append(opts.WorkerEnv, "GORACE=atexit_sleep_ms=0")
	got := runReport([]matrix.Build{b}, opts, nil).Builds[0]
	if got.Status != report.StatusBudgetExceeded || strings.Contains(got.Reason, "killed") || got.Budget == nil || got.Budget.Kind != kindBuild {
		t.Fatalf("status %s (%s), budget %+v; want budget-exceeded by the build budget, at a callback", got.Status, got.Reason, got.Budget)
	}
	if got.Callbacks == 0 || got.Callbacks >= largeTraceRepeat*6439 {
		t.Errorf("%d callbacks: the budget must stop the replay part way", got.Callbacks)
	}
	if latency := time.Duration(got.StopLatencyMs) * time.Millisecond; latency > bound {
		t.Errorf("the build ended %v after its budget ran out, want within %v", latency, bound)
	}
}
