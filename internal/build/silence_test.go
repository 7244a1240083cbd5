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
