package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/memory"
	"github.com/trt-action/trt-action/internal/report"

	"github.com/trt-action/trt-action/internal/text"
)

// Options configure a run.
type Options struct {
	Exe        string   // the binary to start as a worker (os.Executable)
	WorkerArgs []string // its arguments (the hidden worker subcommand)
	WorkerEnv  []string // extra environment for workers
	LibPath    string   // --trt-lib
	// ReaperArgs start the binary as a script build's reaper (the hidden
	// reaper subcommand); the command's words follow them after "--".
	ReaperArgs []string
	// HookPath is the folder holding the Python hook's bootstrap, put
	// first on a script build's PYTHONPATH; "" runs script builds
	// unobserved.
	HookPath string
	// NativeDir is the folder of libtam_host.so and the backends, which
	// the hook's native route loads into a script build's Python; ""
	// leaves its builds on the Python monitor, and NativeMissing says
	// why (what was not found, and where trt-action looked): each such
	// TensorRT build's route_note, and a warning once per script build.
	NativeDir     string
	NativeMissing string

	Jobs       int           // builds at once; default 1
	GPUs       *gpus.Pool    // when set, each worker gets one GPU from it
	RunBudget  time.Duration // the whole run; 0 = none
	Heartbeat  time.Duration // how often running builds report progress; default 1s
	PhaseDepth int           // phase start/finish events down to this depth; default 2
	RecordDir  string        // --record-trace: one trace file per build
	EveryPhase bool          // --report-detail full: keep every phase instance, not only the folded tree
	Cache      *EngineCache  // the engine cache; nil: every build runs

	// MinFreeMemory holds a build back while less memory than this is
	// free, when other builds run (--jobs above 1); 0 = never
	// (--min-free-memory, memory.go).
	MinFreeMemory int64
	// NVMLLibrary is the NVML library GPU memory is read through
	// (native.NVMLLibrary, the driver's); "" reads no GPU memory.
	NVMLLibrary string
	// For tests: the sampler's base interval (0: memory.BaseInterval),
	// and no memory cgroups.
	memoryEvery time.Duration
	noCgroups   bool
	machine     *memory.Machine // nil: this machine's

	// InterruptGrace bounds how long builds get to stop softly after a
	// signal before they are killed: the runner sends SIGTERM 7.5 s after
	// SIGINT, and everything must be written by then.
	InterruptGrace time.Duration

	Matrix string // matrix file, for the report
	Tool   string // "trt-action 0.1.0"

	// OnEvent receives every event of the run, from one goroutine, in order.
	OnEvent func(event.Event)
	// Conclude is called (from the same goroutine) once every build has
	// ended, before the last checkpoint and the run_finished event: it adds
	// to the report what the run's outcome also depends on (the baseline
	// comparison), so every view's last line names it.
	Conclude func(*report.Report)
	// Checkpoint is called (from the same goroutine) with the report at the
	// start, soon after builds start or end (at most about once a second:
	// builds starting or ending together share one call), and at the end:
	// write the report and summary.
	Checkpoint func(*report.Report)
}

func (o *Options) defaults() {
	if o.Jobs < 1 {
		o.Jobs = 1
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.PhaseDepth <= 0 {
		o.PhaseDepth = 2
	}
	if o.InterruptGrace <= 0 {
		o.InterruptGrace = defaultInterruptGrace
	}
	if o.OnEvent == nil {
		o.OnEvent = func(event.Event) {}
	}
	if o.Checkpoint == nil {
		o.Checkpoint = func(*report.Report) {}
	}
	if o.Conclude == nil {
		o.Conclude = func(*report.Report) {}
	}
}

// defaultInterruptGrace is how long running builds get to stop softly after
// SIGINT or SIGTERM before they are killed. TensorRT can go seconds without
// a callback, and only a callback can honour a soft stop; this keeps the
// whole exit, report included, under 2 s.
const defaultInterruptGrace = 1500 * time.Millisecond

// Interrupted is the cause of a run stopped by a signal.
type Interrupted struct{ Signal os.Signal }

func (e Interrupted) Error() string { return "interrupted by " + signalName(e.Signal) }

// signalName is s as the report's Signal names it.
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return report.SignalInterrupt
	case syscall.SIGTERM:
		return report.SignalTerminate
	}
	return s.String()
}

// runner is the owner of one run: it alone touches the report.
type runner struct {
	opts    Options
	builds  []matrix.Build
	started time.Time
	rep     *report.Report
	events  chan event.Event

	soft    context.Context // cancelled (with cause) to stop builds softly
	stop    context.CancelCauseFunc
	kill    context.Context // cancelled to kill every worker now
	killNow context.CancelFunc

	admit      context.Context // closed, with its cause, once no further build may start
	closeAdmit context.CancelCauseFunc
	views      *viewQueue

	lastTurn chan struct{} // closed once the latest dispatched build has asked for its GPU

	mem *runMemory // every build's memory sampler, NVML, cgroups (memory.go)

	rebuildsPlanned <-chan struct{} // closed once the keys --rebuild is for are known (EngineCache.planRebuilds)

	// The engine cache's shared store (shared.go); shared is nil without one.
	shared   *sharedTier
	pushJobs []*pushJob            // by build: its push, set before its end is sent, taken by the loop
	awaiting map[int]*report.Build // builds whose push runs, as they ended; the loop's
	// pushesAbandoned is why pushes were abandoned (a signal, the push
	// timeout); nil while they may run. The loop's.
	pushesAbandoned error
	closed          chan struct{} // closed once the loop has ended: a late push's events go nowhere

	lastCheckpoint time.Time
	checkpointCost time.Duration    // how long the last checkpoint took
	checkpointDue  <-chan time.Time // a deferred checkpoint; nil when none is owed
}

// Run builds everything, one worker process per build, until all builds end
// or a signal arrives on signals (SIGINT or SIGTERM: stop softly; a second
// SIGINT: kill). It returns the final report and, for a run a signal
// stopped, that signal as an Interrupted error. The report records it too
// (report.Signal, which the exit code is decided from, and Interrupted,
// which words it for people).
func Run(builds []matrix.Build, opts Options, signals <-chan os.Signal) (*report.Report, error) {
	opts.defaults()
	r := &runner{opts: opts, builds: builds, started: time.Now(), events: make(chan event.Event, 256)}
	r.soft, r.stop = context.WithCancelCause(context.Background())
	r.kill, r.killNow = context.WithCancel(context.Background())
	r.admit, r.closeAdmit = context.WithCancelCause(context.Background())
	defer r.stop(nil)
	defer r.killNow()
	defer r.closeAdmit(nil)
	r.views = newViewQueue(opts.OnEvent)
	r.mem = newRunMemory(opts)
	defer r.mem.close()
	r.rep = &report.Report{Version: report.SchemaVersion, Tool: opts.Tool, Matrix: opts.Matrix,
		StartedAt: r.started.UTC(), Builds: make([]report.Build, len(builds))}
	r.pushJobs, r.awaiting, r.closed = make([]*pushJob, len(builds)), map[int]*report.Build{}, make(chan struct{})
	if opts.Cache != nil && opts.Cache.Remote != nil {
		r.shared = newSharedTier(opts.Cache, r.storeWarning)
		defer r.shared.cancel(errors.New("the run ended"))
		r.rep.Cache = r.shared.runCache()
	}
	r.rep.KeepEncodings() // an ended build changes only by Settle (a push that ends after it: shared.go)
	for i, b := range builds {
		r.rep.Builds[i] = pendingBuild(b)
	}
	r.emit(event.Event{Kind: event.RunStarted, Build: -1, Total: len(builds)})
	r.checkMemoryBudgets()
	r.checkGPUMemoryBudgets()
	r.checkpoint(true)
	select {
	case sig := <-signals: // it came while the run was being set up: start nothing
		r.onSignal(sig)
	default:
	}
	if opts.Cache != nil {
		r.rebuildsPlanned = opts.Cache.planRebuilds(r) // before any build asks the cache
	}
	r.loop(signals)
	close(r.closed)
	r.finish()
	r.views.close()
	var interrupted Interrupted
	if errors.As(context.Cause(r.soft), &interrupted) {
		return r.rep, interrupted
	}
	return r.rep, nil
}

func (r *runner) since() time.Duration { return time.Since(r.started) }

func (r *runner) emit(ev event.Event) {
	ev.At = r.since()
	r.views.send(ev)
}

func (r *runner) loop(signals <-chan os.Signal) {
	next, running := 0, 0
	var runOver <-chan time.Time
	if r.opts.RunBudget > 0 {
		// From the run's start, as each build's run limit counts: the first
		// checkpoint (a slow disk) must not give the runner more time than
		// its builds.
		t := time.NewTimer(max(r.opts.RunBudget-r.since(), 0))
		defer t.Stop()
		runOver = t.C
	}
	// changed: a build started or ended since the last checkpoint. A
	// build's start is written as its end is (at most once a second), so
	// the report of a run that was killed says which builds were under
	// way, not "pending"; one that ended and the next that started in its
	// place share one write.
	changed := false
	var memoryWait <-chan time.Time // a look again at free memory, while a build is held back for it
	for {
		for running < r.opts.Jobs && next < len(r.builds) && r.admit.Err() == nil {
			held, why := r.heldForMemory(running)
			if held {
				if memoryWait == nil {
					memoryWait = time.After(memoryRecheck)
				}
				break
			}
			if why != "" {
				r.warnBeforeStart(next, why)
			}
			r.rep.Builds[next].Status = report.StatusRunning
			r.rep.Builds[next].StartMs = r.since().Milliseconds()
			turn := make(chan struct{})
			go r.runBuild(next, r.lastTurn, turn)
			r.lastTurn = turn
			next, running = next+1, running+1
			changed = true
		}
		if running == 0 && (next == len(r.builds) || r.admit.Err() != nil) {
			r.cancelPending(next)
			if changed && len(r.awaiting) > 0 {
				r.checkpoint(false) // the last builds' ends, before the wait for their pushes
			}
			r.awaitPushes(signals)
			return
		}
		if changed {
			r.checkpoint(false)
			changed = false
		}
		select {
		case ev := <-r.events:
			if r.take(ev, &running) {
				changed = true
			}
		case <-r.checkpointDue:
			r.checkpoint(true)
		case <-memoryWait:
			memoryWait = nil
		case sig := <-signals:
			r.onSignal(sig)
		case <-runOver:
			// Running builds stop themselves through their run limit;
			// this only keeps the rest from starting.
			r.closeAdmit(runBudgetExceeded{Limit: r.opts.RunBudget})
		}
	}
}

// take handles an event of a build (or of its push) on the loop, and
// hands it to the views. It reports whether the report changed in a way
// the next checkpoint must write (a build's end, a push's outcome).
func (r *runner) take(ev event.Event, running *int) (changed bool) {
	switch {
	case ev.Kind == event.BuildFinished:
		*running--
		ev.Result = r.beginPush(ev.Build, ev.Result)
		r.rep.Settle(ev.Build, ev.Result)
		r.closeIfRunSpent()
		changed = true
	case ev.Kind == event.CachePushed:
		if _, ok := r.awaiting[ev.Build]; !ok {
			return false // abandoned already: the report and the views have its warning
		}
		delete(r.awaiting, ev.Build)
		r.rep.Settle(ev.Build, ev.Result)
		changed = true
	case ev.Kind == event.Warning && ev.Build == -1 && r.rep.Cache != nil:
		if msg, ok := strings.CutPrefix(ev.Message, report.CacheWarningPrefix); ok {
			r.rep.Cache.Warnings = append(r.rep.Cache.Warnings, msg)
		}
	}
	r.emit(ev)
	return changed
}

// closeIfRunSpent closes admission when the run's clock says its budget
// is spent, whether or not the loop has seen its timer yet: a build its
// run limit stopped ends at the same moment as the timer fires, and a
// loaded machine can hand the loop the builds' ends first; the last of
// them would end the loop with the run's budget never named as why. It is
// asked as a build's end is taken, before the checkpoint, whose own time
// must not make a run whose builds all ended in time one its budget ended.
func (r *runner) closeIfRunSpent() {
	if r.runSpent() {
		r.closeAdmit(runBudgetExceeded{Limit: r.opts.RunBudget})
	}
}

func (r *runner) onSignal(sig os.Signal) {
	if r.soft.Err() != nil {
		if sig == os.Interrupt {
			r.emit(event.Event{Kind: event.Stopping, Build: -1, Message: "second SIGINT: killing every build"})
			r.killNow()
		}
		return
	}
	cause := Interrupted{Signal: sig}
	r.rep.Signal = signalName(sig)
	r.rep.Interrupted = fmt.Sprintf("%s after %s", r.rep.Signal, text.Precise(r.since()))
	r.closeAdmit(cause)
	r.stop(cause)
	r.emit(event.Event{Kind: event.Stopping, Build: -1,
		Message: fmt.Sprintf("%s: stopping every build (up to %s); press Ctrl-C again to kill", signalName(sig), r.opts.InterruptGrace)})
	r.abandonPushes(cause.Error()) // a transfer of gigabytes must not hold up the exit
}

// cancelPending marks the builds that never started.
func (r *runner) cancelPending(from int) {
	why := fmt.Sprintf("not started: %v", context.Cause(r.admit))
	for i := from; i < len(r.builds); i++ {
		b := &r.rep.Builds[i]
		b.Status, b.Reason = report.StatusCancelled, why
		b.StartMs = r.since().Milliseconds()
		r.emit(event.Event{Kind: event.BuildFinished, Build: i, Name: b.Name, Result: b})
	}
}

// startRefused is why a build that has not started its worker must not
// start it now: a signal, or the run budget spent (also in the moment
// before the runner's loop has seen it run out); nil when it may.
func (r *runner) startRefused() error {
	if err := context.Cause(r.admit); err != nil {
		return err
	}
	if r.runSpent() {
		return runBudgetExceeded{Limit: r.opts.RunBudget}
	}
	return nil
}

// runSpent reports whether the run's budget is spent by the run's clock,
// which counts from its start, as each build's run limit does
// (watch.startClock).
func (r *runner) runSpent() bool {
	return r.opts.RunBudget > 0 && r.since() >= r.opts.RunBudget
}

// runBudgetExceeded is why builds were not started once the run budget ran out.
type runBudgetExceeded struct{ Limit time.Duration }

func (e runBudgetExceeded) Error() string { return fmt.Sprintf("run budget %s exceeded", e.Limit) }

func (r *runner) finish() {
	// A run its budget ended is complete: nothing more was meant to run,
	// and the report says why it ended. Only a signal leaves it incomplete.
	var budget runBudgetExceeded
	if errors.As(context.Cause(r.admit), &budget) {
		r.rep.Ended = budget.Error()
	}
	r.rep.Complete = r.rep.Interrupted == "" && (r.admit.Err() == nil || r.rep.Ended != "")
	r.opts.Conclude(r.rep)
	r.checkpoint(true)
	r.emit(event.Event{Kind: event.RunFinished, Build: -1, Run: r.rep})
}

// checkpoint hands the report to be written (JSON report, summary). Builds
// that end in a burst are written together: a write waits until a second,
// or ten times the last write's cost, has passed since the last one, so a
// matrix of thousands of builds does not spend its time rewriting reports.
func (r *runner) checkpoint(force bool) {
	gap := max(time.Second, 10*r.checkpointCost)
	if wait := gap - time.Since(r.lastCheckpoint); !force && wait > 0 {
		if r.checkpointDue == nil {
			r.checkpointDue = time.After(wait)
		}
		return
	}
	r.checkpointDue = nil
	r.rep.DurationMs = r.since().Milliseconds()
	start := time.Now()
	r.opts.Checkpoint(r.rep)
	r.lastCheckpoint, r.checkpointCost = time.Now(), time.Since(start)
}

// runBuild runs one build on its own goroutine and reports its end. Builds
// ask for a GPU in the order they were dispatched (matrix order): each
// waits for the one before it to have asked (prev), then lets the next go
// (turn).
func (r *runner) runBuild(i int, prev <-chan struct{}, turn chan<- struct{}) {
	w := newWatch(r, i, r.builds[i])
	var res *report.Build
	if r.opts.GPUs == nil {
		close(turn)
		res = w.run()
	} else {
		if prev != nil {
			<-prev
		}
		dev, release, err := r.opts.GPUs.Acquire(r.admit)
		close(turn)
		if err != nil {
			res = w.finish(report.StatusCancelled, fmt.Sprintf("not started: %v", context.Cause(r.admit)), outcome{})
		} else {
			// The GPU is freed only once the end is queued, so views see
			// this build finish before the next one starts on it.
			defer release()
			w.gpu = dev
			res = w.run()
		}
	}
	r.pushJobs[i] = w.push // the loop takes it with the build's end
	r.events <- event.Event{Kind: event.BuildFinished, Build: i, Name: res.Name, Result: res}
}
