package trace

import (
	"slices"
	"time"
)

// traceStats describes a trace at a glance.
type traceStats struct {
	Callbacks int // all events
	Starts    int
	Steps     int
	Finishes  int
	MaxDepth  int      // nesting levels: 1 when only root phases ran
	Phases    []string // distinct phase names, sorted
	Threads   []int    // distinct thread ids, sorted
	Duration  time.Duration
	Running   int // phases started and not finished by the end
}

// summarize counts events by kind and measures the phase tree. Depth follows
// each start's parent while it runs; a start whose parent is not running
// counts as a root. Duration is the time of the last event, since times
// count from the start of the build.
func summarize(events []Event) traceStats {
	var s traceStats
	depth := map[string]int{} // running phase -> nesting level
	names := map[string]bool{}
	threads := map[int]bool{}
	for _, ev := range events {
		s.Callbacks++
		names[ev.Phase] = true
		threads[ev.Thread] = true
		s.Duration = max(s.Duration, ev.T)
		switch ev.Kind {
		case Start:
			s.Starts++
			d := depth[ev.Parent] + 1 // 0 + 1 for a root or an unknown parent
			depth[ev.Phase] = d
			s.MaxDepth = max(s.MaxDepth, d)
		case Step:
			s.Steps++
		case Finish:
			s.Finishes++
			delete(depth, ev.Phase)
		}
	}
	s.Running = len(depth)
	for name := range names {
		s.Phases = append(s.Phases, name)
	}
	for id := range threads {
		s.Threads = append(s.Threads, id)
	}
	slices.Sort(s.Phases)
	slices.Sort(s.Threads)
	return s
}
