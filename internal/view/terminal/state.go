package terminal

import (
	"slices"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

// runState is everything a frame shows, kept from the run's events. renderState is a
// pure function of it; the view applies events and renders when a frame is
// due.
type runState struct {
	Now      time.Duration // the run clock when the frame is drawn
	Total    int           // builds in the run
	Builds   []buildState  // by build index
	Finished []int         // indexes of finished builds, in the order they finished
	// Stopping is set once the whole run was asked to stop (first Ctrl-C,
	// run budget); it holds the supervisor's message.
	Stopping    bool
	StopMessage string
	// Baseline holds previous durations by build name, for the ETA.
	Baseline map[string]time.Duration
}

// buildState is one build's live state.
type buildState struct {
	Name      string
	Started   bool
	StartedAt time.Duration
	// Beat is the newest heartbeat's progress with the phase events that
	// came after it applied; BeatAt is when that heartbeat was sent.
	Beat   event.Progress
	BeatAt time.Duration
	// WarnedBudget is the budget a BudgetWarning was about (the heartbeat's
	// BudgetName when it came); the build shows as warned while the
	// nearest budget is still that one.
	WarnedBudget string
	Warned       bool
	Stopping     bool          // this build was asked to stop
	Result       *report.Build // only what the view shows: name, status, duration
	// Script is set once the build shows it runs a command (its output, a
	// TensorRT build inside it); Output counts the lines it printed.
	Script bool
	Output int
	// Transfer is the newest progress of the build's transfer with the
	// shared cache store while one runs (a pull before the build's
	// engine is in place, a push that may outlive the build); nil when
	// none does.
	Transfer *event.Transfer
}

// apply records one event. Events must come in order.
func (s *runState) apply(ev event.Event) {
	if ev.At > s.Now {
		s.Now = ev.At
	}
	switch ev.Kind {
	case event.RunStarted:
		s.Total = ev.Total
	case event.BuildStarted:
		b := s.build(ev.Build)
		b.Name, b.Started, b.StartedAt = ev.Name, true, ev.At
		b.Beat, b.BeatAt = event.Progress{BudgetLeft: -1}, ev.At
	case event.PhaseStarted:
		if b := s.build(ev.Build); ev.Inner == b.Beat.Inner {
			b.phaseStarted(ev)
		}
	case event.PhaseFinished:
		if b := s.build(ev.Build); ev.Inner == b.Beat.Inner {
			b.phaseFinished(ev.Path)
		}
	case event.Output:
		b := s.build(ev.Build)
		b.Script = true
		b.Output++
	case event.InnerStarted:
		s.build(ev.Build).innerStarted(ev.Inner)
	case event.InnerFinished:
		s.build(ev.Build).innerFinished(ev.Inner)
	case event.Heartbeat:
		if ev.Progress != nil {
			b := s.build(ev.Build)
			b.Beat, b.BeatAt = *ev.Progress, ev.At
			b.Beat.Active = slices.Clone(ev.Progress.Active)
			b.Script = b.Script || b.Beat.Inner > 0 || b.Beat.InnerDone > 0
			if b.Warned && b.Beat.BudgetName != b.WarnedBudget {
				b.Warned = false // that budget is behind us; a new one applies
			}
		}
	case event.BudgetWarning:
		b := s.build(ev.Build)
		b.Warned, b.WarnedBudget = true, b.Beat.BudgetName
	case event.Stopping:
		if ev.Build < 0 {
			s.Stopping, s.StopMessage = true, ev.Message
		} else {
			s.build(ev.Build).Stopping = true
		}
	case event.CacheTransfer:
		if t := ev.Transfer; t != nil {
			b := s.build(ev.Build)
			b.Transfer = t
			if t.Ended {
				b.Transfer = nil
			}
		}
	case event.BuildFinished:
		s.finish(ev)
	}
}

// build returns the state of build i, growing the list for indexes not seen
// before (a view may miss RunStarted when attached late).
func (s *runState) build(i int) *buildState {
	if i < 0 {
		i = 0
	}
	for len(s.Builds) <= i {
		s.Builds = append(s.Builds, buildState{Beat: event.Progress{BudgetLeft: -1}})
	}
	return &s.Builds[i]
}

func (s *runState) finish(ev event.Event) {
	b := s.build(ev.Build)
	if r := ev.Result; r != nil {
		// Not a copy of the whole result: it would hold the build's phase
		// trees and log lines for the rest of a matrix's run.
		b.Result = &report.Build{Name: r.Name, Status: r.Status, DurationMs: r.DurationMs, Memory: r.Memory}
	} else {
		b.Result = &report.Build{Name: ev.Name, Status: report.StatusFailed}
	}
	if b.Name == "" {
		b.Name = b.Result.Name
	}
	if !slices.Contains(s.Finished, ev.Build) {
		s.Finished = append(s.Finished, ev.Build)
	}
}

// innerStarted shows TensorRT build k, the newest, as the heartbeats do,
// from its first phase on; phase events of other TensorRT builds of the
// command leave the chain alone until a heartbeat says which one runs.
func (b *buildState) innerStarted(k int) {
	b.Script = true
	b.Beat.Inner, b.Beat.Active = k, nil
	b.Beat.InnerRunning++
}

// innerFinished counts TensorRT build k done, and takes its phases off
// the screen if they are the ones shown.
func (b *buildState) innerFinished(k int) {
	b.Beat.InnerRunning = max(0, b.Beat.InnerRunning-1)
	b.Beat.InnerDone++
	if b.Beat.Inner == k {
		b.Beat.Inner, b.Beat.Active = 0, nil
	}
}

// phaseStarted extends the active chain between heartbeats, so a new phase
// shows at once. Its Elapsed is stored relative to BeatAt, like the chain
// from the heartbeat, so that rendering adds the same drift to every phase.
func (b *buildState) phaseStarted(ev event.Event) {
	parent := len(ev.Path) - 1
	if parent < 0 || !b.chainHas(ev.Path[:parent]) {
		return // a phase below what we track; the next heartbeat has it
	}
	b.Beat.Active = append(b.Beat.Active[:parent], event.ActivePhase{
		Name: ev.Path[parent], Steps: ev.Steps, Elapsed: b.BeatAt - ev.At,
	})
}

// phaseFinished cuts the chain at a finished phase, so a phase that ended
// early (before its last step, as TensorRT's do on shortcuts and errors)
// does not linger as a stuck bar until the next heartbeat.
func (b *buildState) phaseFinished(path []string) {
	if len(path) == 0 || !b.chainHas(path) {
		return
	}
	b.Beat.Active = b.Beat.Active[:len(path)-1]
}

// chainHas reports whether the active chain starts with the phases in path.
func (b *buildState) chainHas(path []string) bool {
	if len(path) > len(b.Beat.Active) {
		return false
	}
	for i, name := range path {
		if b.Beat.Active[i].Name != name {
			return false
		}
	}
	return true
}

// running reports whether the build has started and not finished.
func (b *buildState) running() bool { return b.Started && b.Result == nil }

// pushing reports whether the build has finished and its push to the
// shared store goes on.
func (b *buildState) pushing() bool { return b.Result != nil && b.Transfer != nil }
