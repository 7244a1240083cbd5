package report

import (
	"slices"
	"testing"
	"time"
)

func TestTopPhasesAggregatesInstancesByPath(t *testing.T) {
	b := &Build{DurationMs: 10_000, Phases: []*Phase{{
		Name: "Building engine", StartMs: 0, EndMs: 10_000,
		Children: []*Phase{
			{Name: "Timing", StartMs: 0, EndMs: 1_000},
			{Name: "Timing", StartMs: 1_000, EndMs: 4_000},
			{Name: "Other", StartMs: 4_000, EndMs: 5_000, Children: []*Phase{
				{Name: "Timing", StartMs: 4_000, EndMs: 4_500}, // same name, other parent
			}},
			{Name: "Unfinished", StartMs: 8_000, EndMs: -1},
		},
	}}}
	got := topPhasesOf(b, 3)
	want := []PhaseTotal{
		{Path: []string{"Building engine"}, Total: 10 * time.Second, Count: 1, Share: 1},
		{Path: []string{"Building engine", "Timing"}, Total: 4 * time.Second, Count: 2, Share: 0.4},
		{Path: []string{"Building engine", "Unfinished"}, Total: 2 * time.Second, Count: 1, Share: 0.2},
	}
	if !slices.EqualFunc(got, want, func(x, y PhaseTotal) bool {
		return slices.Equal(x.Path, y.Path) && x.Total == y.Total && x.Count == y.Count && x.Share == y.Share
	}) {
		t.Fatalf("TopPhases =\n%+v\nwant\n%+v", got, want)
	}
	if all := topPhasesOf(b, 0); len(all) != 5 {
		t.Errorf("topPhasesOf(b, 0) has %d paths, want all 5", len(all))
	}
}

func TestSlowestPhaseFollowsTheDominantChild(t *testing.T) {
	b := &Build{DurationMs: 20_000, Phases: phaseTree(20_000, true)}
	// Building engine 19.9s › Computing profile costs 16s (> half) ›
	// Timing tactics 15.9s (> half): the innermost dominant phase.
	if got, want := SlowestPhase(b), "Building engine/Computing profile costs/Timing tactics"; got != want {
		t.Errorf("SlowestPhase = %q, want %q", got, want)
	}
	short := &Build{DurationMs: 5_000, Phases: phaseTree(5_000, true)}
	// Optimizing graph 3.8s of 4.9s dominates; it has no children.
	if got, want := SlowestPhase(short), "Building engine/Optimizing graph"; got != want {
		t.Errorf("SlowestPhase = %q, want %q", got, want)
	}
	if got := SlowestPhase(&Build{}); got != "" {
		t.Errorf("SlowestPhase of a build without phases = %q", got)
	}
}
