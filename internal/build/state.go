// Package build runs a build matrix: one worker process per build, a
// supervisor that owns each build's state, budgets that stop builds through
// the progress monitor, and the signals that stop them all.
package build

import (
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
)

// phase is one running instance of a phase. Once it finishes it is folded
// into its node and, unless every instance is kept, forgotten.
type phase struct {
	name     string
	parent   *phase
	node     *report.FoldNode // its phase path in the folded tree
	start    time.Duration
	end      time.Duration // -1 while running
	done     int
	steps    int
	children []*phase     // only when every instance is kept
	limits   []phaseLimit // phase budgets that match this instance
}

// State is one build's phase tree as its callbacks describe it: the
// instances still running, and the finished ones folded by phase path, so
// its memory follows the build's shape rather than its length. One
// goroutine owns it; nothing here locks.
type State struct {
	fold    *report.Folder
	roots   []*phase // every instance, only with keepAll (--report-detail full)
	keepAll bool
	running map[string][]*phase // running phases by name; a stack, newest last
	newest  *phase              // the most recently started phase still running
	closed  bool                // Close has folded what was still running

	callbacks      int64
	anomalies      int64 // callbacks that broke the monitor contract (ignored)
	last           time.Duration
	longestSilence time.Duration
}

// newState returns the state of a build that has not called back yet; it
// keeps the folded tree and the slowest instances.
func newState() *State {
	return &State{running: map[string][]*phase{}, fold: report.NewFolder(report.DefaultSlowestInstances)}
}

// newDetailedState is newState that also keeps every phase instance, for
// --report-detail full: memory grows with the build's length.
func newDetailedState() *State {
	s := newState()
	s.keepAll = true
	return s
}

// Change says what an applied callback did to the tree.
type Change struct {
	Started  *phase
	Finished *phase
}

// Apply records one callback. Events must come in the order they were made.
func (s *State) Apply(ev trace.Event) Change {
	s.callbacks++
	if gap := ev.T - s.last; gap > s.longestSilence {
		s.longestSilence = gap
	}
	if ev.T > s.last {
		s.last = ev.T
	}
	switch ev.Kind {
	case trace.Start:
		return Change{Started: s.start(ev)}
	case trace.Step:
		if p := s.find(ev.Phase); p != nil {
			p.done = max(p.done, ev.Step+1)
		} else {
			s.anomalies++
		}
	case trace.Finish:
		return Change{Finished: s.finish(ev)}
	}
	return Change{}
}

func (s *State) start(ev trace.Event) *phase {
	p := &phase{name: ev.Phase, start: ev.T, end: -1, steps: ev.Steps}
	if ev.Parent != "" {
		if parent := s.find(ev.Parent); parent != nil {
			p.parent = parent
		} else {
			s.anomalies++
		}
	}
	if p.parent != nil {
		p.node = p.parent.node.Child(ev.Phase)
		if s.keepAll {
			p.parent.children = append(p.parent.children, p)
		}
	} else {
		p.node = s.fold.Root().Child(ev.Phase)
		if s.keepAll {
			s.roots = append(s.roots, p)
		}
	}
	s.running[ev.Phase] = append(s.running[ev.Phase], p)
	s.newest = p
	return p
}

func (s *State) finish(ev trace.Event) *phase {
	stack := s.running[ev.Phase]
	if len(stack) == 0 {
		s.anomalies++
		return nil
	}
	p := stack[len(stack)-1]
	if len(stack) == 1 {
		delete(s.running, ev.Phase)
	} else {
		s.running[ev.Phase] = stack[:len(stack)-1]
	}
	p.end = ev.T
	s.fold.Add(p.node, p.start, p.end, 0, p.done, p.steps)
	if s.newest == p {
		s.newest = s.newestRunningAncestor(p)
	}
	return p
}

// newestRunningAncestor finds what is innermost once p has finished: its
// nearest running ancestor (TensorRT's phases nest, so that is the chain).
func (s *State) newestRunningAncestor(p *phase) *phase {
	for q := p.parent; q != nil; q = q.parent {
		if q.end < 0 {
			return q
		}
	}
	return nil
}

func (s *State) find(name string) *phase {
	stack := s.running[name]
	if len(stack) == 0 {
		return nil
	}
	return stack[len(stack)-1]
}

// Callbacks counts every callback applied.
func (s *State) Callbacks() int64 { return s.callbacks }

// LastCallback is the time of the newest callback.
func (s *State) LastCallback() time.Duration { return s.last }

// countSilenceFrom makes the first silence start at t, when the build
// began on its clock, not at 0: a TensorRT build inside a script build
// begins on the command's clock, after whatever the program did first.
func (s *State) countSilenceFrom(t time.Duration) { s.last = t }

// LongestSilenceUntil is the longest gap between two callbacks, counting
// the silence still running at end, the build's end on the same clock: the
// silence that got a build killed is often its longest.
func (s *State) LongestSilenceUntil(end time.Duration) time.Duration {
	return max(s.longestSilence, end-s.last)
}

// activeChain returns the running phases from the root to the innermost.
func (s *State) activeChain() []*phase {
	var chain []*phase
	for p := s.newest; p != nil; p = p.parent {
		chain = append(chain, p)
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// Active describes the running chain at time now.
func (s *State) Active(now time.Duration) []event.ActivePhase {
	chain := s.activeChain()
	out := make([]event.ActivePhase, len(chain))
	for i, p := range chain {
		out[i] = event.ActivePhase{Name: p.name, Done: p.done, Steps: p.steps, Elapsed: now - p.start}
	}
	return out
}

// Close folds the instances still running as unfinished, counted until
// end (the build's end). Only the report needs them: call it once the build
// is over. Later callbacks still count but change no tree.
func (s *State) Close(end time.Duration) {
	if s.closed {
		return
	}
	s.closed = true
	for _, stack := range s.running {
		for _, p := range stack {
			s.fold.Add(p.node, p.start, -1, end, p.done, p.steps)
		}
	}
}

// Folded is the folded phase tree and the slowest instances, for the report.
func (s *State) Folded() ([]*report.PhaseNode, []report.PhaseInstance) { return s.fold.Tree() }

// Tree copies every phase instance for a report (nil unless the state keeps
// them). Phases still running get end -1.
func (s *State) Tree() []*report.Phase {
	return copyPhases(s.roots)
}

func copyPhases(ps []*phase) []*report.Phase {
	if len(ps) == 0 {
		return nil
	}
	out := make([]*report.Phase, len(ps))
	for i, p := range ps {
		end := int64(-1)
		if p.end >= 0 {
			end = p.end.Milliseconds()
		}
		out[i] = &report.Phase{
			Name: p.name, StartMs: p.start.Milliseconds(), EndMs: end,
			Done: p.done, Steps: p.steps, Children: copyPhases(p.children),
		}
	}
	return out
}

// names lists the phase's names from the root down.
func (p *phase) names() []string { return p.node.Names() }
