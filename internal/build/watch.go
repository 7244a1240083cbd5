package build

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
	"github.com/trt-action/trt-action/internal/trace"
)

// maxLogLines bounds the library log lines kept per build in the report;
// maxShownLogs the warnings and errors shown in its log.
const (
	maxLogLines  = 200
	maxShownLogs = 30
)

// watch supervises one build's worker. It owns the build's State and Budget.
type watch struct {
	r     *runner
	index int
	spec  matrix.Build

	started  time.Time
	offset   time.Duration // build clock when the worker's clock started
	state    *State
	budget   *Budget
	lastSeen time.Duration // build clock of the newest callback batch
	peakUse  float64

	res       report.Build
	hit       *report.BudgetHit // the limit that stopped the build
	ctl       control           // soft stops and kills
	result    *message
	output    tail // the worker's own stdout and stderr
	recording *traceRecorder
	engineTmp string
	exitErr   error
	gpu       string           // the GPU this build runs on, "" when not assigned
	shownLogs int              // library warnings and errors seen so far
	key       *cacheKey        // the build's engine cache key; nil without one
	push      *pushJob         // what the build asks the shared store to be pushed, once it has ended; nil for nothing
	mem       *buildMemory     // its memory (memwatch.go); nil until its first process starts
	exitState *os.ProcessState // how its worker (or reaper) ended, once it has
	// unwritten says why a build with run: that ended ok is not stored
	// whole: an output it declares was not written during this run.
	unwritten string
}

func newWatch(r *runner, i int, spec matrix.Build) *watch {
	state := newState()
	if r.opts.EveryPhase {
		state = newDetailedState()
	}
	return &watch{r: r, index: i, spec: spec, state: state, res: r.rep.Builds[i], started: time.Now()}
}

func (w *watch) now() time.Duration { return time.Since(w.started) }

func (w *watch) emit(ev event.Event) {
	ev.Build, ev.Name = w.index, w.spec.Name
	w.r.events <- ev
}

// run starts the worker and follows it to its end. Its clock, and the run
// budget it gets, start now: a build may have waited for a GPU.
func (w *watch) run() *report.Build {
	w.startClock()
	started := event.Event{Kind: event.BuildStarted}
	if w.gpu != "" {
		started.Message = "on GPU " + w.gpu
	}
	w.emit(started)
	if w.spec.Script != nil {
		w.budget.spec = commandBudgets(w.spec.Budgets)
		if ended := w.lookup(); ended != nil {
			return ended // a hit starts no command
		}
		return w.runScript()
	}
	if err := w.prepareEngine(); err != nil {
		return w.finish(report.StatusFailed, "engine: "+err.Error(), outcome{})
	}
	if ended := w.lookup(); ended != nil {
		return ended
	}
	msgs, exited, err := w.start()
	if err != nil {
		return w.finish(report.StatusFailed, "could not start the worker: "+err.Error(), outcome{})
	}
	release := w.obeySignals()
	w.follow(msgs, exited)
	release()
	return w.classify()
}

// obeySignals makes the run's signals stop the build softly (a second
// SIGINT kills it) until release is called. Signals act through control,
// not through the loop that follows the build, so they work even while it
// waits on a slow view.
func (w *watch) obeySignals() (release func()) {
	stopOnSignal := context.AfterFunc(w.r.soft, func() {
		grace := min(w.spec.Budgets.Grace, w.r.opts.InterruptGrace)
		w.ctl.softStop(fmt.Sprint(context.Cause(w.r.soft)), w.now(), grace)
	})
	killOnSecond := context.AfterFunc(w.r.kill, func() { w.ctl.kill("killed by a second SIGINT") })
	return func() {
		stopOnSignal()
		killOnSecond()
	}
}

// startClock starts the build's clock, and the budgets that count from
// it, now. Its run limit ends when the run's clock says the run budget is
// spent, never before (runner.runSpent): both are read from one moment.
func (w *watch) startClock() {
	w.started = time.Now()
	inRun := w.started.Sub(w.r.started)
	w.res.StartMs = inRun.Milliseconds()
	var runLeft time.Duration
	if w.r.opts.RunBudget > 0 {
		runLeft = max(w.r.opts.RunBudget-inRun, time.Millisecond)
	}
	w.budget = newBudget(w.spec.Budgets, runLeft)
}

// follow handles the worker's messages, budgets and heartbeats until the
// worker has exited and its messages are all read.
func (w *watch) follow(msgs <-chan message, exited <-chan error) {
	beat := time.NewTicker(w.r.opts.Heartbeat)
	defer beat.Stop()
	check := time.NewTimer(time.Hour)
	defer check.Stop()
	exitedYet := false
	for msgs != nil || !exitedYet {
		w.armCheck(check)
		select {
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				continue
			}
			w.handle(m)
		case err := <-exited:
			exitedYet, exited = true, nil
			w.exitErr = err
			w.ctl.exited()
		case s := <-w.mem.samples():
			if !exitedYet {
				w.noteSample(s, w.judging())
			}
		case <-check.C:
		case <-beat.C:
			w.heartbeat()
		}
		if w.judging() {
			w.enforceBudgets()
		}
	}
	if w.recording != nil {
		w.recording.close()
	}
}

// judging is whether budgets still apply: not once the build has a result
// (a late deadline must not turn a finished build into a stopped one), and
// not once it is being stopped.
func (w *watch) judging() bool {
	return w.result == nil && !w.ctl.stopping()
}

// enforceBudgets checks every limit and stops the build softly when one has
// run out: stepComplete returns false from then on.
func (w *watch) enforceBudgets() {
	hit := w.checkBudgets()
	if hit == nil {
		return
	}
	deadline := w.now() - time.Duration(hit.ElapsedMs-hit.LimitMs)*time.Millisecond
	why := describeHit(hit)
	if w.ctl.softStop(why, deadline, w.spec.Budgets.Grace) {
		w.hit = hit
		w.emit(event.Event{Kind: event.Stopping, Message: why})
	}
}

// armCheck sets the timer to the next moment a budget could run out or warn;
// at once if one already has.
func (w *watch) armCheck(t *time.Timer) {
	now := w.now()
	next, ok := w.budget.Next(w.state, now, w.lastSeen)
	if !ok || !w.judging() {
		next = now + time.Hour
	}
	t.Reset(max(next-now, 0))
}

func (w *watch) handle(m message) {
	switch m.M {
	case msgHello:
		w.offset = w.now()
		w.res.Library = m.Library
		if w.res.Settings != nil {
			// A copy: the run's report, which other goroutines write out,
			// shares the original until this build's result replaces it.
			s := *w.res.Settings
			s.Library = m.Library
			w.res.Settings = &s
		}
	case msgEvents:
		w.lastSeen = w.now()
		for _, ev := range m.Events {
			if w.recording != nil {
				w.recording.write(ev)
			}
			ev.T += w.offset
			w.apply(ev)
		}
	case msgLogs:
		for _, l := range m.Logs {
			w.noteLog(l)
		}
	case msgResult:
		w.result = &m
	}
}

// noteLog keeps a library log line for the report and shows warnings and
// errors in the build's log, both bounded: a library can log thousands.
func (w *watch) noteLog(l report.LogLine) {
	w.mem.noteLog(l.Text)
	if l.Severity == report.SeverityVerbose {
		return
	}
	if len(w.res.Log) < maxLogLines {
		w.res.Log = append(w.res.Log, l)
	}
	if l.Severity != report.SeverityError && l.Severity != report.SeverityWarning {
		return
	}
	w.shownLogs++
	switch {
	case w.shownLogs <= maxShownLogs:
		w.emit(event.Event{Kind: event.LibraryLog, Severity: l.Severity, Message: l.Text})
	case w.shownLogs == maxShownLogs+1:
		w.emit(event.Event{Kind: event.LibraryLog, Severity: report.SeverityWarning,
			Message: fmt.Sprintf("more than %d warnings and errors; the rest are in the JSON report (up to %d lines)", maxShownLogs, maxLogLines)})
	}
}

func (w *watch) apply(ev trace.Event) {
	w.applyCallback(w.state, w.budget, &w.peakUse, 0, ev)
}

// applyCallback records one callback in state: a phase it starts gets its
// phase budgets, one it finishes raises peak to the highest share of a
// phase budget it used, and the views hear of both down to the phase
// depth. inner is the TensorRT build of a script build the callback is
// of (0 for a matrix build); a script build keeps a state, budget and
// peak for each.
func (w *watch) applyCallback(state *State, budget *Budget, peak *float64, inner int, ev trace.Event) {
	ch := state.Apply(ev)
	if p := ch.Started; p != nil {
		budget.Attach(p)
		if p.node.Depth() <= w.r.opts.PhaseDepth {
			w.emit(event.Event{Kind: event.PhaseStarted, Inner: inner, Path: p.names(), Steps: p.steps})
		}
	}
	if p := ch.Finished; p != nil {
		for _, l := range p.limits {
			*peak = max(*peak, float64(p.end-p.start)*100/float64(l.limit))
		}
		if p.node.Depth() <= w.r.opts.PhaseDepth {
			w.emit(event.Event{Kind: event.PhaseFinished, Inner: inner, Path: p.names(), Steps: p.steps, Done: p.done, Elapsed: p.end - p.start})
		}
	}
}

func (w *watch) checkBudgets() *report.BudgetHit {
	now := w.now()
	v := w.budget.Check(w.state, now, w.lastSeen)
	w.peakUse = max(w.peakUse, w.budget.Use(w.state, now, w.lastSeen))
	for _, msg := range v.Warnings {
		w.res.Warnings = append(w.res.Warnings, msg)
		w.emit(event.Event{Kind: event.BudgetWarning, Message: msg})
	}
	return v.Hit
}

func (w *watch) heartbeat() {
	now := w.now()
	left, name := w.budget.Nearest(w.state, now, w.lastSeen)
	w.emit(event.Event{Kind: event.Heartbeat, Progress: &event.Progress{
		Elapsed: now, Active: w.state.Active(now), Callbacks: w.state.Callbacks(),
		Silent: now - w.lastSeen, BudgetLeft: left, BudgetName: name, Memory: w.mem.use(),
	}})
}

// describeHit words a budget hit for people.
func describeHit(h *report.BudgetHit) string {
	limit, took := time.Duration(h.LimitMs)*time.Millisecond, time.Duration(h.ElapsedMs)*time.Millisecond
	switch h.Kind {
	case kindPhase:
		return fmt.Sprintf("budget exceeded in phase %q after %s (limit %s for %q)", h.Phase, text.Precise(took), limit, h.Pattern)
	case kindStall:
		return fmt.Sprintf("stalled: no progress callback for %s (stall limit %s)", text.Precise(took), limit)
	case kindRun:
		return fmt.Sprintf("run budget exhausted after %s of this build (%s left when it started)", text.Precise(took), limit)
	case report.BudgetMemory:
		return fmt.Sprintf("memory budget exceeded: its processes held %s (limit %s)", text.Bytes(h.PeakBytes), text.ExactSize(h.LimitBytes))
	case report.BudgetGPUMemory:
		return fmt.Sprintf("GPU memory budget exceeded: its processes held %s of GPU memory (limit %s)", text.Bytes(h.PeakBytes), text.ExactSize(h.LimitBytes))
	}
	return fmt.Sprintf("build budget exceeded after %s (limit %s)", text.Precise(took), limit)
}

// classify decides the build's status from how its worker ended, then
// keeps or removes the engine accordingly.
func (w *watch) classify() *report.Build {
	ctl := w.ctl.outcome()
	var budget string
	if w.hit != nil {
		budget = w.hit.Kind
	}
	w.res.Memory = w.mem.end(w.exitState)
	var oom string
	if w.mem.killedByOOM(ctl.killWhy == "" && diedOf(w.exitState, syscall.SIGKILL)) {
		oom = outOfMemory(w.res.Memory)
	}
	status, reason := decideStatus(ending{result: w.result, ctl: ctl, budget: budget,
		exit: exitDescription(w.exitErr), lastError: w.lastLibraryError(), output: w.output.lastLine(), oom: oom})
	if status == report.StatusOK {
		w.hit = nil // a budget that ran out after the engine was done stopped nothing
	}
	return w.finish(status, reason, ctl)
}

// diedOf reports whether a process ended by signal sig.
func diedOf(state *os.ProcessState, sig syscall.Signal) bool {
	if state == nil {
		return false
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// finish settles the engine file for a decided status and records the
// build's report entry.
func (w *watch) finish(status, reason string, ctl outcome) *report.Build {
	if w.mem != nil && w.mem.res == nil { // its process never started: its cgroup goes
		w.res.Memory = w.mem.end(w.exitState)
	}
	if err := w.settleEngine(status); err != nil {
		status, reason = report.StatusFailed, "engine could not be kept: "+err.Error()
	}
	b := w.conclude(status, reason, ctl)
	w.store()
	w.releaseKey() // after the store: a build waiting for this key finds the engine
	return b
}

// lastLibraryError is the newest error line the library logged, "" if none.
func (w *watch) lastLibraryError() string {
	for i := len(w.res.Log) - 1; i >= 0; i-- {
		if w.res.Log[i].Severity == report.SeverityError {
			return w.res.Log[i].Text
		}
	}
	return ""
}

// conclude fills in the build's report entry from its decided status.
func (w *watch) conclude(status, reason string, ctl outcome) *report.Build {
	b := &w.res
	b.Status, b.Reason, b.Budget = status, reason, w.hit
	end := w.now()
	b.DurationMs = end.Milliseconds()
	if w.spec.Script == nil { // a script build's are its TensorRT builds' (noteScript)
		b.Callbacks = w.state.Callbacks()
		// Event times are shifted by the hello's arrival, which can come late
		// under load; the stall budget counts from the newest batch's arrival.
		// The silence that ended the build is at least what the stall budget saw.
		b.LongestSilenceMs = max(w.state.LongestSilenceUntil(end), end-w.lastSeen).Milliseconds()
	}
	w.state.Close(end)
	b.PhaseTree, b.SlowestPhases = w.state.Folded()
	b.Phases = w.state.Tree()
	b.BudgetUse = w.peakUse
	if ctl.stopWhy != "" {
		b.StopLatencyMs = max(w.now()-ctl.stopAt, 0).Milliseconds()
	}
	if w.result != nil && w.result.Dropped > 0 {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%d callbacks were dropped: the worker's queue was full", w.result.Dropped))
	}
	return b
}
