package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
	"github.com/trt-action/trt-action/native"
	"golang.org/x/sys/unix"

	"github.com/trt-action/trt-action/internal/text"
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
	gpu       string // the GPU this build runs on, "" when not assigned
	shownLogs int    // library warnings and errors seen so far
}

func newWatch(r *runner, i int, spec matrix.Build) *watch {
	state := NewState()
	if r.opts.EveryPhase {
		state = NewDetailedState()
	}
	return &watch{r: r, index: i, spec: spec, state: state, res: r.rep.Builds[i], started: time.Now()}
}

func (w *watch) now() time.Duration { return time.Since(w.started) }

func (w *watch) emit(ev report.Event) {
	ev.Build, ev.Name = w.index, w.spec.Name
	w.r.events <- ev
}

// run starts the worker and follows it to its end. Its clock, and the run
// budget it gets, start now: a build may have waited for a GPU.
func (w *watch) run() *report.Build {
	w.started = time.Now()
	w.res.StartMs = w.r.since().Milliseconds()
	var runLeft time.Duration
	if w.r.opts.RunBudget > 0 {
		runLeft = max(w.r.opts.RunBudget-w.r.since(), time.Millisecond)
	}
	w.budget = NewBudget(w.spec.Budgets, runLeft)
	started := report.Event{Kind: report.BuildStarted}
	if w.gpu != "" {
		started.Message = "on GPU " + w.gpu
	}
	w.emit(started)
	if err := w.prepareEngine(); err != nil {
		return w.conclude(report.StatusFailed, "engine: "+err.Error(), outcome{})
	}
	msgs, exited, err := w.start()
	if err != nil {
		return w.conclude(report.StatusFailed, "could not start the worker: "+err.Error(), outcome{})
	}
	// Signals act through control, not through follow's loop, so they work
	// even while follow waits on a slow view.
	stopOnSignal := context.AfterFunc(w.r.soft, func() {
		grace := min(w.spec.Budgets.Grace, w.r.opts.InterruptGrace)
		w.ctl.softStop(fmt.Sprint(context.Cause(w.r.soft)), w.now(), grace)
	})
	killOnSecond := context.AfterFunc(w.r.kill, func() { w.ctl.kill("killed by a second SIGINT") })
	w.follow(msgs, exited)
	stopOnSignal()
	killOnSecond()
	return w.classify()
}

// start launches the worker in a process group of its own, so the terminal's
// Ctrl-C reaches only the supervisor, and a kill takes all it started.
func (w *watch) start() (<-chan message, <-chan error, error) {
	spec, err := w.workerSpec()
	if err != nil {
		return nil, nil, err
	}
	protoR, protoW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(w.r.opts.Exe, w.r.opts.WorkerArgs...)
	cmd.Env = append(workerEnviron(os.Environ()), w.r.opts.WorkerEnv...)
	if w.gpu != "" {
		// nvidia-smi numbers GPUs by PCI bus; make CUDA agree with it.
		cmd.Env = append(cmd.Env, gpus.Env(w.gpu), "CUDA_DEVICE_ORDER=PCI_BUS_ID")
		w.res.GPU = w.gpu
	}
	cmd.ExtraFiles = []*os.File{protoW}
	cmd.Stdout, cmd.Stderr = &w.output, &w.output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	protoW.Close()
	if err != nil {
		protoR.Close()
		return nil, nil, err
	}
	line, _ := json.Marshal(spec)
	_, _ = stdin.Write(append(line, '\n'))
	w.ctl.stdin, w.ctl.pgid = stdin, cmd.Process.Pid
	// Few messages in flight: everything queued between the monitor and the
	// state delays when a budget sees a phase start.
	msgs := make(chan message, 2)
	go func() { readMessages(protoR, msgs); protoR.Close() }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return msgs, exited, nil
}

func (w *watch) workerSpec() (workerSpec, error) {
	b := w.spec
	if b.TimingCache != "" {
		if err := os.MkdirAll(filepath.Dir(b.TimingCache), 0o755); err != nil {
			return workerSpec{}, err
		}
	}
	req := native.Request{Name: b.Name, ONNX: b.ONNX, EngineTmp: w.engineTmp, LibPath: w.r.opts.LibPath,
		WorkspaceBytes: b.WorkspaceBytes, OptLevel: b.OptLevel, TilingLevel: b.TilingLevel, Precision: b.Precision,
		Targets: b.Targets, TimingCache: b.TimingCache, Settings: b.Settings.Map()}
	if len(b.Shapes) > 0 {
		req.Shapes = map[string]native.Shape{}
		for k, s := range b.Shapes {
			req.Shapes[k] = native.Shape{Min: s.Min, Opt: s.Opt, Max: s.Max}
		}
	}
	if b.Backend == "sim" {
		req.Sim = &native.SimRequest{StepNs: int64(b.Sim.Step), Unpaced: b.Sim.Fast, Repeat: b.Sim.Repeat, Threads: b.Sim.Threads,
			Fault: b.Sim.Fault.Kind, FaultNs: int64(b.Sim.Fault.Duration), FaultAtFrac: 0.5}
	}
	if w.r.opts.RecordDir != "" {
		rec, err := newTraceRecorder(w.r.opts.RecordDir, b.Name)
		if err != nil {
			return workerSpec{}, err
		}
		w.recording = rec
	}
	return workerSpec{Backend: b.Backend, Request: req, SimTrace: b.Sim.Trace}, nil
}

// prepareEngine picks the partial file the worker writes the engine to,
// beside the engine path so that keeping it is a rename. The path must be
// able to take the engine before the build spends time on it, and partial
// files that killed runs left there are removed. A build without an engine
// path writes to a temporary file that is never kept.
func (w *watch) prepareEngine() error {
	engine := w.spec.Engine
	if engine == "" {
		f, err := os.CreateTemp("", "trt-action-discarded-*.engine")
		if err != nil {
			return err
		}
		w.engineTmp = f.Name()
		return f.Close()
	}
	if err := os.MkdirAll(filepath.Dir(engine), 0o755); err != nil {
		return err
	}
	if err := atomicfile.CheckInstall(engine); err != nil {
		return err
	}
	_, _ = atomicfile.RemoveStale(engine) // best effort: a leftover never stops a build
	w.engineTmp = atomicfile.PartialName(engine)
	return nil
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
		w.emit(report.Event{Kind: report.Stopping, Message: why})
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
	if l.Severity == "verbose" {
		return
	}
	if len(w.res.Log) < maxLogLines {
		w.res.Log = append(w.res.Log, l)
	}
	if l.Severity != "error" && l.Severity != "warning" {
		return
	}
	w.shownLogs++
	switch {
	case w.shownLogs <= maxShownLogs:
		w.emit(report.Event{Kind: report.LibraryLog, Severity: l.Severity, Message: l.Text})
	case w.shownLogs == maxShownLogs+1:
		w.emit(report.Event{Kind: report.LibraryLog, Severity: "warning",
			Message: fmt.Sprintf("more than %d warnings and errors; the rest are in the JSON report (up to %d lines)", maxShownLogs, maxLogLines)})
	}
}

func (w *watch) apply(ev trace.Event) {
	ch := w.state.Apply(ev)
	if p := ch.Started; p != nil {
		w.budget.Attach(p)
		if p.node.Depth() <= w.r.opts.PhaseDepth {
			w.emit(report.Event{Kind: report.PhaseStarted, Path: p.names(), Steps: p.steps})
		}
	}
	if p := ch.Finished; p != nil {
		w.notePhaseUse(p)
		if p.node.Depth() <= w.r.opts.PhaseDepth {
			w.emit(report.Event{Kind: report.PhaseFinished, Path: p.names(), Steps: p.steps, Done: p.done, Elapsed: p.end - p.start})
		}
	}
}

// notePhaseUse keeps the highest share of a phase budget any finished phase used.
func (w *watch) notePhaseUse(p *phase) {
	for _, l := range p.limits {
		w.peakUse = max(w.peakUse, float64(p.end-p.start)*100/float64(l.limit))
	}
}

func (w *watch) checkBudgets() *report.BudgetHit {
	now := w.now()
	v := w.budget.Check(w.state, now, w.lastSeen)
	w.peakUse = max(w.peakUse, w.budget.Use(w.state, now, w.lastSeen))
	for _, msg := range v.Warnings {
		w.res.Warnings = append(w.res.Warnings, msg)
		w.emit(report.Event{Kind: report.BudgetWarning, Message: msg})
	}
	return v.Hit
}

func (w *watch) heartbeat() {
	now := w.now()
	left, name := w.budget.Nearest(w.state, now, w.lastSeen)
	w.emit(report.Event{Kind: report.Heartbeat, Progress: &report.Progress{
		Elapsed: now, Active: w.state.Active(now), Callbacks: w.state.Callbacks(),
		Silent: now - w.lastSeen, BudgetLeft: left, BudgetName: name,
	}})
}

// describeHit words a budget hit for people.
func describeHit(h *report.BudgetHit) string {
	limit, took := time.Duration(h.LimitMs)*time.Millisecond, time.Duration(h.ElapsedMs)*time.Millisecond
	switch h.Kind {
	case KindPhase:
		return fmt.Sprintf("budget exceeded in phase %q after %s (limit %s for %q)", h.Phase, text.Precise(took), limit, h.Pattern)
	case KindStall:
		return fmt.Sprintf("stalled: no progress callback for %s (stall limit %s)", text.Precise(took), limit)
	case KindRun:
		return fmt.Sprintf("run budget exhausted after %s of this build (%s left when it started)", text.Precise(took), limit)
	}
	return fmt.Sprintf("build budget exceeded after %s (limit %s)", text.Precise(took), limit)
}

// classify decides the build's status from how its worker ended. Reasons
// leave out the duration: every view shows it beside the status.
func (w *watch) classify() *report.Build {
	ctl := w.ctl.outcome()
	switch {
	case w.result != nil && w.result.Status == "ok":
		// The engine was complete and synced before the result was sent;
		// a kill during the worker's teardown does not undo that.
		w.hit = nil
		if err := w.keepEngine(); err != nil {
			return w.conclude(report.StatusFailed, "engine could not be kept: "+err.Error(), ctl)
		}
		return w.conclude(report.StatusOK, "", ctl)
	case ctl.killWhy != "" && ctl.stopWhy != "":
		return w.conclude(report.StatusKilled, ctl.stopWhy+"; "+ctl.killWhy, ctl)
	case ctl.killWhy != "":
		return w.conclude(report.StatusKilled, ctl.killWhy, ctl)
	case w.result != nil && ctl.stopWhy != "" && w.result.Status != "unavailable":
		if w.hit != nil {
			return w.conclude(report.StatusBudgetExceeded, ctl.stopWhy, ctl)
		}
		return w.conclude(report.StatusCancelled, ctl.stopWhy, ctl)
	case w.result != nil && w.result.Status == "cancelled":
		return w.conclude(report.StatusCancelled, "the library stopped the build although nobody asked it to", ctl)
	case w.result != nil:
		return w.conclude(report.StatusFailed, w.failure(), ctl)
	}
	return w.conclude(report.StatusCrashed, fmt.Sprintf("worker crashed: %s%s", exitDescription(w.exitErr), w.output.lastLine()), ctl)
}

func (w *watch) failure() string {
	if w.result.Error != "" {
		return w.result.Error
	}
	for i := len(w.res.Log) - 1; i >= 0; i-- {
		if w.res.Log[i].Severity == "error" {
			return w.res.Log[i].Text
		}
	}
	return "the library returned no engine"
}

func exitDescription(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + unix.SignalName(ws.Signal())
		}
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	if err != nil {
		return err.Error()
	}
	return "exited without a result"
}

// conclude fills in the report entry; any engine that is not kept is removed.
func (w *watch) conclude(status, reason string, ctl outcome) *report.Build {
	if status != report.StatusOK && w.engineTmp != "" {
		_ = os.Remove(w.engineTmp)
	}
	b := &w.res
	b.Status, b.Reason, b.Budget = status, reason, w.hit
	end := w.now()
	b.DurationMs = end.Milliseconds()
	b.Callbacks = w.state.Callbacks()
	// Event times are shifted by the hello's arrival, which can come late
	// under load; the stall budget counts from the newest batch's arrival.
	// The silence that ended the build is at least what the stall budget saw.
	b.LongestSilenceMs = max(w.state.LongestSilenceUntil(end), end-w.lastSeen).Milliseconds()
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

// keepEngine renames the complete engine into place and fingerprints it;
// a build without an engine path keeps nothing.
func (w *watch) keepEngine() error {
	f, err := os.Open(w.engineTmp)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	f.Close()
	if err != nil {
		return err
	}
	if w.spec.Engine == "" {
		return os.Remove(w.engineTmp)
	}
	if err := atomicfile.Install(w.engineTmp, w.spec.Engine); err != nil {
		return err
	}
	w.res.Engine = &report.Engine{Path: w.spec.Engine, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	return nil
}

// tail keeps the last lines a worker printed, to explain a crash.
type tail struct {
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 8<<10 {
		t.buf = t.buf[len(t.buf)-4<<10:]
	}
	return len(p), nil
}

func (t *tail) lastLine() string {
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return " (last output: " + last + ")"
	}
	return ""
}

// workerEnviron is the supervisor's environment without the tokens a
// workflow gives it: a worker loads TensorRT, plugins and models, and needs
// none of them.
func workerEnviron(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		secret := strings.Contains(upper, "TOKEN") &&
			(strings.HasPrefix(upper, "GITHUB_") || strings.HasPrefix(upper, "INPUT_") || strings.HasPrefix(upper, "ACTIONS_"))
		if !secret {
			out = append(out, kv)
		}
	}
	return out
}
