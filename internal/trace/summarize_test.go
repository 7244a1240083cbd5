package trace

import (
	"slices"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	events := []Event{
		{T: 1 * time.Millisecond, Thread: 1, Kind: Start, Phase: "root", Steps: 2},
		{T: 2 * time.Millisecond, Thread: 2, Kind: Start, Phase: "mid", Parent: "root", Steps: 1},
		{T: 3 * time.Millisecond, Thread: 2, Kind: Start, Phase: "leaf", Parent: "mid", Steps: 1},
		{T: 4 * time.Millisecond, Thread: 2, Kind: Step, Phase: "leaf"},
		{T: 5 * time.Millisecond, Thread: 2, Kind: Finish, Phase: "leaf"},
		{T: 6 * time.Millisecond, Thread: 2, Kind: Finish, Phase: "mid"},
		{T: 7 * time.Millisecond, Thread: 1, Kind: Start, Phase: "leaf", Parent: "root", Steps: 1}, // same name, shallower
		{T: 9 * time.Millisecond, Thread: 5, Kind: Step, Phase: "root", Step: 1},
	}
	s := summarize(events)
	want := traceStats{
		Callbacks: 8, Starts: 4, Steps: 2, Finishes: 2, MaxDepth: 3,
		Phases: []string{"leaf", "mid", "root"}, Threads: []int{1, 2, 5},
		Duration: 9 * time.Millisecond, Running: 2,
	}
	if s.Callbacks != want.Callbacks || s.Starts != want.Starts || s.Steps != want.Steps ||
		s.Finishes != want.Finishes || s.MaxDepth != want.MaxDepth || s.Duration != want.Duration ||
		s.Running != want.Running || !slices.Equal(s.Phases, want.Phases) || !slices.Equal(s.Threads, want.Threads) {
		t.Errorf("Summary:\n got %+v\nwant %+v", s, want)
	}
}

func TestSummaryEmpty(t *testing.T) {
	if s := summarize(nil); s.Callbacks != 0 || s.MaxDepth != 0 || s.Phases != nil || s.Duration != 0 {
		t.Errorf("summarize(nil) = %+v, want zero", s)
	}
}
