package build

import (
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
)

func TestLongestSilenceCountsTheSilenceStillRunning(t *testing.T) {
	s := newState()
	s.Apply(trace.Event{Kind: trace.Start, Phase: "A", Steps: 2, T: 100 * time.Millisecond})
	s.Apply(trace.Event{Kind: trace.Step, Phase: "A", Step: 0, T: 400 * time.Millisecond})
	if got := s.LongestSilenceUntil(500 * time.Millisecond); got != 300*time.Millisecond {
		t.Errorf("ended 100ms after the last callback: %v, want the earlier 300ms gap", got)
	}
	if got := s.LongestSilenceUntil(3 * time.Second); got != 2600*time.Millisecond {
		t.Errorf("ended 2.6s after the last callback: %v, want 2.6s", got)
	}
	if got := newState().LongestSilenceUntil(time.Second); got != time.Second {
		t.Errorf("no callback at all in 1s: %v, want 1s", got)
	}
}

func TestSilenceCountsFromTheBuildsBegin(t *testing.T) {
	s := newState()
	s.countSilenceFrom(2 * time.Second)
	s.Apply(trace.Event{Kind: trace.Start, Phase: "A", Steps: 2, T: 2100 * time.Millisecond})
	s.Apply(trace.Event{Kind: trace.Step, Phase: "A", Step: 0, T: 2300 * time.Millisecond})
	if got := s.LongestSilenceUntil(2400 * time.Millisecond); got != 200*time.Millisecond {
		t.Errorf("a build that began at 2s: longest silence %v, want the 200ms gap inside it", got)
	}
}

// A TensorRT build inside a script build: its longest silence is inside
// it, from its begin to its end, not since the command started.
func TestATensorRTBuildsLongestSilenceIsInsideIt(t *testing.T) {
	got, _ := runScripts(t, scriptOptions(t), scriptBuild(t, "quiet", "quiet-then-build", nil))
	b := got["quiet"]
	if b.Status != report.StatusOK || len(b.TensorRTBuilds) != 1 {
		t.Fatalf("%s (%s), %d TensorRT builds", b.Status, b.Reason, len(b.TensorRTBuilds))
	}
	in := b.TensorRTBuilds[0]
	// The program was silent for 400ms before the build began.
	if in.StartMs < 400 || in.LongestSilenceMs > in.DurationMs {
		t.Errorf("TensorRT build from %d ms for %d ms: longest silence %d ms, more than the build lasted", in.StartMs, in.DurationMs, in.LongestSilenceMs)
	}
}

func TestKilledBuildReportsTheSilenceThatKilledIt(t *testing.T) {
	dir := t.TempDir()
	const stall, grace = 300 * time.Millisecond, 300 * time.Millisecond
	b := simBuild(dir, "hang", func(b *matrix.Build) {
		b.Sim.Fault = matrix.Fault{Kind: "hang"}
		b.Budgets.Stall, b.Budgets.Grace = stall, grace
	})
	r := runReport([]matrix.Build{b}, testOptions(t), nil)
	got := r.Builds[0]
	if got.Status != report.StatusBudgetExceeded || !strings.Contains(got.Reason, "300ms grace, so it was killed") {
		t.Fatalf("status %s (%s), want budget-exceeded, killed after its 300ms grace", got.Status, got.Reason)
	}
	// The stall limit ran out with no callback for at least its length, and
	// none came after: the final silence is at least the limit. (Not limit
	// plus grace: under load a batch sent before the stop can arrive during
	// the grace, carrying callbacks from before it.)
	if got.LongestSilenceMs < stall.Milliseconds() {
		t.Errorf("longest_silence_ms %d, want at least %d (the silence that ran out the stall limit)", got.LongestSilenceMs, stall.Milliseconds())
	}
}
