package report

import (
	"testing"
)

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
