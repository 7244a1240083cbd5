package build

import (
	"fmt"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// The TensorRT builds inside a script build, each as its hook reported it.

// innerBuild is one TensorRT build a process of the command ran.
type innerBuild struct {
	rep      report.TensorRTBuild
	state    *State
	budget   *Budget // its phase and stall limits; the command's own are the script's
	begun    time.Duration
	lastSeen time.Duration // build clock of its newest callback batch (or its begin)
	end      *hookMsg      // its end message; nil while it runs or when its process died
	gone     bool          // its process ended while it ran
	done     bool          // concluded: rep is final
	peakUse  float64
	beside   bool        // another TensorRT build ran beside it (scriptoutput.go)
	mem      innerMemory // what its process held while it ran (scriptmemory.go)
}

// innerBudgets are the limits that apply inside one TensorRT build: the
// phase and stall budgets. A program may rightly be silent for minutes
// outside a build (imports, an export, writing files), so the stall
// budget counts only inside one; the build budget covers the command.
func innerBudgets(b matrix.Budgets) matrix.Budgets {
	return matrix.Budgets{Stall: b.Stall, Phases: b.Phases, WarnPercent: b.WarnPercent}
}

func (s *script) handle(p hookPacket) {
	if p.closed {
		s.connectionClosed(p.conn)
		return
	}
	m := p.msg
	switch m.M {
	case hookHello:
		s.procs[p.conn] = &hookProcess{pid: m.PID, argv: m.Argv}
	case hookBegin:
		s.begin(p.conn, m)
	case hookEvents:
		if in := s.inner[innerKey{p.conn, m.ID}]; in != nil && !in.done {
			s.apply(in, m.E)
		}
	case hookEnd:
		if in := s.inner[innerKey{p.conn, m.ID}]; in != nil && !in.done {
			in.end = &m
			s.conclude(in, s.clock.at(m.T))
		}
	}
}

func (s *script) begin(conn int, m hookMsg) {
	key := innerKey{conn, m.ID}
	if _, dup := s.inner[key]; dup {
		return
	}
	w := s.w
	now := w.now()
	state := newState()
	if w.r.opts.EveryPhase {
		state = newDetailedState()
	}
	in := &innerBuild{state: state, budget: newBudget(innerBudgets(w.spec.Budgets), 0),
		begun: max(s.clock.at(m.T), 0), lastSeen: now}
	state.countSilenceFrom(in.begun) // its silences are inside it, not since the command started
	in.rep = report.TensorRTBuild{Index: len(s.order) + 1, Entry: m.Entry, Route: m.Route, RouteNote: s.routeNote(m),
		Library: m.Library, StartMs: in.begun.Milliseconds(), Network: m.Network}
	if proc := s.procs[conn]; proc != nil {
		in.rep.PID = proc.pid
	}
	in.rep.Settings = configSettings(m.Config, m.Library)
	s.inner[key] = in
	s.order = append(s.order, in)
	s.newest = in
	s.noteBeside(in)
	w.emit(event.Event{Kind: event.InnerStarted, Inner: in.rep.Index, Message: describeInner(in.rep)})
	s.warnRoute(in)
	s.warnBackend(in)
}

// describeInner words where a TensorRT build runs: "pid 4711 ·
// build_serialized_network · python route".
func describeInner(b report.TensorRTBuild) string {
	return fmt.Sprintf("pid %d · %s · %s route", b.PID, b.Entry, b.Route)
}

func (s *script) apply(in *innerBuild, evs []hookEvent) {
	w := s.w
	in.lastSeen = w.now()
	for _, he := range evs {
		ev := he.ev
		ev.T = s.clock.at(he.mono)
		w.applyCallback(in.state, in.budget, &in.peakUse, in.rep.Index, ev)
	}
}

// connectionClosed: a process is gone. A build it had not ended ended
// with it.
func (s *script) connectionClosed(conn int) {
	for key, in := range s.inner {
		if key.conn == conn && !in.done {
			in.gone = true
			s.conclude(in, s.w.now())
		}
	}
}

// conclude decides one TensorRT build's status and tells the views.
func (s *script) conclude(in *innerBuild, end time.Duration) {
	ctl := s.w.ctl.outcome()
	status, reason := decideInnerStatus(innerEnding{end: in.end, gone: in.gone, ctl: ctl, budget: s.stopKind(), lastError: s.libraryError(in)})
	in.done = true
	end = max(end, in.begun)
	b := &in.rep
	if s.hitInner == in {
		// Its own limit stopped the command: its line names it already.
		reason = strings.TrimPrefix(reason, innerSubject(b.Index))
	}
	b.Status, b.Reason = status, reason
	if in.end != nil && in.end.Result == hookResultOK {
		b.SerializedBytes = in.end.Bytes
	}
	if s.w.hit != nil && s.hitInner == in {
		b.Budget = s.w.hit
	}
	// Whole milliseconds of the same clock its phases' times are cut to,
	// so none of them ends after StartMs+DurationMs.
	b.DurationMs = end.Milliseconds() - b.StartMs
	b.Callbacks = in.state.Callbacks()
	b.LongestSilenceMs = max(in.state.LongestSilenceUntil(end), 0).Milliseconds()
	in.state.Close(end)
	b.PhaseTree, b.SlowestPhases = in.state.Folded()
	b.Phases = in.state.Tree()
	b.Memory = in.mem.report()
	if s.newest == in {
		s.newest = s.newestRunning()
	}
	final := *b
	s.w.emit(event.Event{Kind: event.InnerFinished, Inner: b.Index, InnerResult: &final})
}

// innerSubject begins what is said of one TensorRT build of the command
// where the command's words go (its stop, its warnings): "TensorRT build 2: ".
func innerSubject(index int) string { return fmt.Sprintf("TensorRT build %d: ", index) }

// newestRunning is the most recently begun TensorRT build still running.
func (s *script) newestRunning() *innerBuild {
	for i := len(s.order) - 1; i >= 0; i-- {
		if !s.order[i].done {
			return s.order[i]
		}
	}
	return nil
}

// stopKind is the kind of budget that asked for the stop; "" for a
// signal or none.
func (s *script) stopKind() string {
	if s.w.hit == nil {
		return ""
	}
	return s.w.hit.Kind
}

// running is the TensorRT builds still running.
func (s *script) running() []*innerBuild {
	var out []*innerBuild
	for _, in := range s.order {
		if !in.done {
			out = append(out, in)
		}
	}
	return out
}

// enforceBudgets checks the command's limits (build, run) and every
// running TensorRT build's (phases, stall); the first that ran out stops
// every build of the command.
func (s *script) enforceBudgets() {
	w := s.w
	now := w.now()
	hit, from := s.check(now)
	if hit == nil {
		return
	}
	deadline := now - time.Duration(hit.ElapsedMs-hit.LimitMs)*time.Millisecond
	why := describeHit(hit)
	if from != nil {
		why = innerSubject(from.rep.Index) + why
	}
	if w.ctl.softStop(why, deadline, w.spec.Budgets.Grace) {
		w.hit, s.hitInner = hit, from
		w.emit(event.Event{Kind: event.Stopping, Message: why})
	}
}

// check runs every limit's check at now: warnings go out, and the first
// limit that ran out is returned with the TensorRT build it belongs to
// (nil for the command's own).
func (s *script) check(now time.Duration) (*report.BudgetHit, *innerBuild) {
	w := s.w
	v := w.budget.Check(s.idle, now, now)
	w.peakUse = max(w.peakUse, w.budget.Use(s.idle, now, now))
	s.warn(v.Warnings, nil)
	hit, from := v.Hit, (*innerBuild)(nil)
	for _, in := range s.running() {
		iv := in.budget.Check(in.state, now, in.lastSeen)
		in.peakUse = max(in.peakUse, in.budget.Use(in.state, now, in.lastSeen))
		w.peakUse = max(w.peakUse, in.peakUse)
		s.warn(iv.Warnings, in)
		if hit == nil && iv.Hit != nil {
			hit, from = iv.Hit, in
		}
	}
	return hit, from
}

func (s *script) warn(msgs []string, in *innerBuild) {
	for _, msg := range msgs {
		if in != nil {
			msg = innerSubject(in.rep.Index) + msg
		}
		s.w.res.Warnings = append(s.w.res.Warnings, msg)
		s.w.emit(event.Event{Kind: event.BudgetWarning, Message: msg})
	}
}

// armCheck sets the timer to the next moment any limit could run out or warn.
func (s *script) armCheck(t *time.Timer) {
	now := s.w.now()
	next, ok := s.w.budget.Next(s.idle, now, now)
	for _, in := range s.running() {
		if n, has := in.budget.Next(in.state, now, in.lastSeen); has && (!ok || n < next) {
			next, ok = n, true
		}
	}
	if !ok || !s.judging() {
		next = now + time.Hour
	}
	t.Reset(max(next-now, 0))
}

func (s *script) heartbeat() {
	w := s.w
	now := w.now()
	left, name := w.budget.Nearest(s.idle, now, now)
	running := s.running()
	p := &event.Progress{Elapsed: now, InnerRunning: len(running), InnerDone: len(s.order) - len(running), BudgetLeft: left, BudgetName: name,
		Memory: w.mem.use()}
	for _, in := range s.order {
		p.Callbacks += in.state.Callbacks()
	}
	for _, in := range running {
		if l, n := in.budget.Nearest(in.state, now, in.lastSeen); l >= 0 && (p.BudgetLeft < 0 || l < p.BudgetLeft) {
			p.BudgetLeft, p.BudgetName = l, innerSubject(in.rep.Index)+n
		}
	}
	if in := s.newest; in != nil {
		p.Inner = in.rep.Index
		p.Active = in.state.Active(now)
		p.Silent = now - in.lastSeen
	}
	w.emit(event.Event{Kind: event.Heartbeat, Progress: p})
}
