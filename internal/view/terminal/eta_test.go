package terminal

import (
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

func TestFor(t *testing.T) {
	root := func(done, steps int, elapsed time.Duration) []event.ActivePhase {
		return []event.ActivePhase{{Name: "Building engine", Done: done, Steps: steps, Elapsed: elapsed}, {Name: "inner", Done: 9, Steps: 10}}
	}
	tests := []struct {
		name     string
		previous time.Duration
		elapsed  time.Duration
		active   []event.ActivePhase
		want     estimate
	}{
		{"baseline left", 90 * time.Second, 30 * time.Second, nil, estimate{Source: etaBaseline, Left: 60 * time.Second}},
		{"baseline wins over progress", 90 * time.Second, 30 * time.Second, root(3, 6, 30*time.Second), estimate{Source: etaBaseline, Left: 60 * time.Second}},
		{"baseline exactly reached", 90 * time.Second, 90 * time.Second, nil, estimate{Source: etaBaseline}},
		{"overdue", 90 * time.Second, 100 * time.Second, nil, estimate{Source: etaBaseline, Overdue: 10 * time.Second}},
		{"progress linear", 0, 40 * time.Second, root(2, 6, 20*time.Second), estimate{Source: etaProgress, Left: 40 * time.Second}},
		{"progress one step is too few", 0, 40 * time.Second, root(1, 6, 20*time.Second), estimate{}},
		{"progress too early", 0, 4 * time.Second, root(3, 6, 4*time.Second), estimate{}},
		{"progress all steps done", 0, 40 * time.Second, root(6, 6, 20*time.Second), estimate{}},
		{"nothing running", 0, 40 * time.Second, nil, estimate{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := estimateLeft(tc.previous, tc.elapsed, tc.active)
			if got != tc.want {
				t.Errorf("estimateLeft(%v, %v, ...) = %+v, want %+v", tc.previous, tc.elapsed, got, tc.want)
			}
		})
	}
}

func TestBaselinesOnlyCountsSuccessfulBuilds(t *testing.T) {
	r := &report.Report{Builds: []report.Build{
		{Name: "a", Status: report.StatusOK, DurationMs: 1500},
		{Name: "b", Status: report.StatusBudgetExceeded, DurationMs: 9000},
		{Name: "c", Status: report.StatusOK, DurationMs: 0},
	}}
	got := baselineDurations(r)
	if len(got) != 1 || got["a"] != 1500*time.Millisecond {
		t.Errorf("baselineDurations = %v, want only a=1.5s", got)
	}
	if baselineDurations(nil) != nil {
		t.Error("baselineDurations(nil) should be nil")
	}
}

// A hit's own time is a cache lookup: the ETA of the build, when it runs
// again, comes from the build that made its engine.
func TestBaselinesCountAHitWithItsOriginalBuild(t *testing.T) {
	r := &report.Report{Builds: []report.Build{{Name: "a", Status: report.StatusCached, DurationMs: 40,
		Cache: &report.CacheUse{Hit: true, BuildMs: 90_000}}}}
	if got := baselineDurations(r); got["a"] != 90*time.Second {
		t.Errorf("baselineDurations = %v, want a=1m30s", got)
	}
}
