package build

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
)

// The test binary doubles as the worker: the supervisor starts it again with
// this variable set, exactly as the real binary starts its hidden subcommand.
const workerEnv = "TRT_ACTION_TEST_WORKER"

func TestMain(m *testing.M) {
	runAsHelper()
	if os.Getenv(workerEnv) == "1" {
		if err := RunWorker(os.Stdin, os.NewFile(3, "proto")); err != nil {
			os.Exit(2) // as the binary's worker does: invalid input
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// simBuild is a quick simulated build of the built-in real phase tree.
func simBuild(dir, name string, mod func(*matrix.Build)) matrix.Build {
	b := matrix.Build{
		Name: name, Backend: "sim", Engine: filepath.Join(dir, name+".engine"),
		Budgets: matrix.Budgets{Grace: 5 * time.Second},
		Sim:     matrix.Sim{Step: 20 * time.Microsecond, Threads: 4, Fault: matrix.Fault{Kind: "none"}},
	}
	if mod != nil {
		mod(&b)
	}
	return b
}

// testExe is this test binary, which runs as the worker when asked to.
func testExe() string { return os.Args[0] }

func testOptions(t testing.TB) Options {
	t.Helper()
	return Options{Exe: testExe(), WorkerArgs: []string{"-test.run=^$"}, WorkerEnv: []string{workerEnv + "=1"},
		Jobs: 3, Heartbeat: 50 * time.Millisecond}
}

func byName(r *report.Report) map[string]report.Build {
	m := map[string]report.Build{}
	for _, b := range r.Builds {
		m[b.Name] = b
	}
	return m
}

func TestFaultsEndWithTheirStatusWhileOtherBuildsSucceed(t *testing.T) {
	dir := t.TempDir()
	fault := func(kind string, d time.Duration) func(*matrix.Build) {
		return func(b *matrix.Build) { b.Sim.Fault = matrix.Fault{Kind: kind, Duration: d} }
	}
	builds := []matrix.Build{
		simBuild(dir, "ok-1", nil),
		simBuild(dir, "crash", fault("crash", 0)),
		simBuild(dir, "hang", func(b *matrix.Build) {
			fault("hang", 0)(b)
			b.Budgets.Stall, b.Budgets.Grace = 300*time.Millisecond, 300*time.Millisecond
		}),
		simBuild(dir, "fail", fault("fail", 0)),
		simBuild(dir, "silence", func(b *matrix.Build) {
			fault("silence", 1500*time.Millisecond)(b)
			b.Budgets.Stall = 300 * time.Millisecond
		}),
		simBuild(dir, "ok-2", nil),
	}
	var events []event.Event
	opts := testOptions(t)
	opts.OnEvent = func(ev event.Event) { events = append(events, ev) }
	rep, cause := Run(builds, opts, nil)
	if cause != nil {
		t.Errorf("a run no signal stopped has cause %v", cause)
	}
	got := byName(rep)
	want := map[string]string{
		"ok-1": report.StatusOK, "ok-2": report.StatusOK, "crash": report.StatusCrashed,
		"hang": report.StatusBudgetExceeded, "fail": report.StatusFailed, "silence": report.StatusBudgetExceeded,
	}
	for name, status := range want {
		if got[name].Status != status {
			t.Errorf("%s: status %q (%s), want %q", name, got[name].Status, got[name].Reason, status)
		}
	}
	if r := got["crash"].Reason; !strings.Contains(r, "worker crashed") || !strings.Contains(r, "SIGABRT") {
		t.Errorf("crash reason = %q", r)
	}
	if r := got["hang"].Reason; !strings.Contains(r, "stalled") || !strings.Contains(r, "killed") {
		t.Errorf("hang reason = %q", r)
	}
	if b := got["silence"].Budget; b == nil || b.Kind != kindStall {
		t.Errorf("silence budget = %+v, want a stall hit", b)
	}
	if r := got["fail"].Reason; !strings.Contains(r, "simulated failure after") {
		t.Errorf("fail reason = %q", r)
	}
	for _, name := range []string{"ok-1", "ok-2"} {
		checkSimEngine(t, name, got[name].Engine)
		b := got[name]
		if tree := b.Folded(); b.Callbacks < 6000 || len(tree) == 0 {
			t.Errorf("%s: %d callbacks, %d root phases", name, b.Callbacks, len(tree))
		}
	}
	assertNoPartials(t, dir)
	if !rep.Complete || events[len(events)-1].Kind != event.RunFinished {
		t.Errorf("run not complete or last event not RunFinished")
	}
}

// checkSimEngine asserts the report's engine is the file the simulator
// wrote: its size and sha256 as reported, and the simulator's header.
func checkSimEngine(t *testing.T, name string, e *report.Engine) {
	t.Helper()
	if e == nil {
		t.Fatalf("%s: report names no engine", name)
	}
	data, err := os.ReadFile(e.Path)
	if err != nil {
		t.Fatalf("%s engine: %v", name, err)
	}
	if int64(len(data)) != e.Bytes {
		t.Errorf("%s engine is %d bytes, report says %d", name, len(data), e.Bytes)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != e.SHA256 {
		t.Errorf("%s engine sha256 %x, report says %s", name, sum, e.SHA256)
	}
	if !strings.HasPrefix(string(data), "TRTACTION-SIM-ENGINE v1\n") {
		t.Errorf("%s engine starts %q, want the simulator's header", name, data[:min(len(data), 40)])
	}
}

// sim.engine-size reaches the worker: the engine has that many bytes.
func TestSimEngineSizeReachesTheWorker(t *testing.T) {
	dir := t.TempDir()
	b := simBuild(dir, "sized", func(b *matrix.Build) { b.Sim.EngineSize = 3<<20 + 1 })
	got := runReport([]matrix.Build{b}, testOptions(t), nil).Builds[0]
	if got.Status != report.StatusOK || got.Engine == nil || got.Engine.Bytes != 3<<20+1 {
		t.Fatalf("status %s, engine %+v; want ok with %d bytes", got.Status, got.Engine, 3<<20+1)
	}
	checkSimEngine(t, "sized", got.Engine)
}

func assertNoPartials(t *testing.T, dir string) {
	t.Helper()
	partials, _ := filepath.Glob(filepath.Join(dir, "*.partial-*"))
	if len(partials) > 0 {
		t.Errorf("partial engines left behind: %v", partials)
	}
}

func TestPhaseBudgetStopsTheBuildThroughTheMonitor(t *testing.T) {
	dir := t.TempDir()
	b := simBuild(dir, "tight", func(b *matrix.Build) {
		b.Sim.Step = 200 * time.Microsecond
		b.Budgets.Phases = []matrix.PhaseBudget{{Pattern: "Timing tactics", Limit: 100 * time.Millisecond}}
	})
	good := []byte("a good engine from an earlier run")
	if err := os.WriteFile(b.Engine, good, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := runReport([]matrix.Build{b}, testOptions(t), nil)
	got := rep.Builds[0]
	if got.Status != report.StatusBudgetExceeded || got.Budget == nil || got.Budget.Kind != kindPhase {
		t.Fatalf("status %q budget %+v reason %q", got.Status, got.Budget, got.Reason)
	}
	if !strings.HasSuffix(got.Budget.Phase, "/Timing tactics") || !strings.Contains(got.Reason, "Timing tactics") {
		t.Errorf("budget names %q, reason %q", got.Budget.Phase, got.Reason)
	}
	// It stopped through stepComplete, long before the end of the trace.
	// (How soon after the deadline is measured by BenchmarkDeadlineToEnd.)
	if full := int64(len(trace.Default())); got.Callbacks >= full {
		t.Errorf("%d callbacks: the build ran to the end (%d)", got.Callbacks, full)
	}
	if got.Budget.ElapsedMs < got.Budget.LimitMs {
		t.Errorf("stopped at %dms, before its %dms limit", got.Budget.ElapsedMs, got.Budget.LimitMs)
	}
	if data, _ := os.ReadFile(b.Engine); string(data) != string(good) {
		t.Errorf("the earlier good engine was replaced by %q", data)
	}
	assertNoPartials(t, dir)
}

// A build budget with a warn percentage warns, then stops the build: the
// warning names the build limit, reaches the views before the stop, and
// says no less than the percentage and no more than the stop's elapsed
// time. Exactly when the check wakes for the warning is Budget.Next's to
// decide (TestNextWakesAtTheWarnPointBeforeTheDeadline, on its own clock):
// here, on a loaded machine, the timer can wake late, so the percentage
// is a lower bound, not "5x%".
func TestBuildBudgetWarnsThenStops(t *testing.T) {
	dir := t.TempDir()
	b := simBuild(dir, "slow", func(b *matrix.Build) {
		b.Sim.Step = 200 * time.Microsecond
		b.Budgets.Build, b.Budgets.WarnPercent = 300*time.Millisecond, 50
	})
	opts := testOptions(t)
	var told []event.EventKind
	opts.OnEvent = func(ev event.Event) {
		if ev.Kind == event.BudgetWarning || ev.Kind == event.Stopping {
			told = append(told, ev.Kind)
		}
	}
	rep := runReport([]matrix.Build{b}, opts, nil)
	got := rep.Builds[0]
	if got.Status != report.StatusBudgetExceeded || got.Budget.Kind != kindBuild {
		t.Fatalf("status %q budget %+v", got.Status, got.Budget)
	}
	if !slices.Equal(told, []event.EventKind{event.BudgetWarning, event.Stopping}) {
		t.Errorf("budget events %v, want a warning, then the stop", told)
	}
	if len(got.Warnings) != 1 || !buildWarning.MatchString(got.Warnings[0]) {
		t.Fatalf("warnings = %q, want one of the form %s", got.Warnings, buildWarning)
	}
	m := buildWarning.FindStringSubmatch(got.Warnings[0])
	pct, _ := strconv.Atoi(m[1])
	soFar, err := time.ParseDuration(m[2])
	if err != nil || pct < 50 || soFar > time.Duration(got.Budget.ElapsedMs)*time.Millisecond {
		t.Errorf("warning %q: want at least 50%%, and no later than the stop at %dms", m[0], got.Budget.ElapsedMs)
	}
	if got.BudgetUse < 100 {
		t.Errorf("budget use = %.0f%%, want >= 100", got.BudgetUse)
	}
}

// buildWarning is the build budget's warning: its percentage and time so far.
var buildWarning = regexp.MustCompile(`^build used (\d+)% of its 300ms limit \(([0-9.]+[a-zµ]+) so far\)$`)

func TestSignalStopsRunningBuildsAndCancelsTheRest(t *testing.T) {
	dir := t.TempDir()
	var builds []matrix.Build
	for _, name := range []string{"a", "b", "c", "d"} {
		builds = append(builds, simBuild(dir, name, func(b *matrix.Build) { b.Sim.Step = time.Millisecond }))
	}
	signals := make(chan os.Signal, 1)
	opts := testOptions(t)
	opts.Jobs = 2
	// Generous under the race detector on a loaded machine; the real
	// binary's SIGINT test holds the 2 s bound.
	opts.InterruptGrace = 10 * time.Second
	sent := false
	opts.OnEvent = func(ev event.Event) {
		if ev.Kind == event.Heartbeat && ev.At > 300*time.Millisecond && !sent {
			sent = true
			signals <- os.Interrupt
		}
	}
	begin := time.Now()
	rep, cause := Run(builds, opts, signals)
	if took := time.Since(begin); took > 10*time.Second {
		t.Errorf("stopping took %v", took)
	}
	if want := (Interrupted{Signal: os.Interrupt}); cause != want {
		t.Errorf("cause %v, want %v", cause, want)
	}
	if rep.Complete || !strings.HasPrefix(rep.Interrupted, "SIGINT after") || rep.Signal != report.SignalInterrupt {
		t.Fatalf("complete=%v interrupted=%q signal=%q", rep.Complete, rep.Interrupted, rep.Signal)
	}
	for _, b := range rep.Builds {
		if b.Status != report.StatusCancelled {
			t.Errorf("%s: %s (%s), want cancelled", b.Name, b.Status, b.Reason)
		}
	}
	if r := rep.Builds[3].Reason; !strings.Contains(r, "not started: interrupted by SIGINT") {
		t.Errorf("pending build reason = %q", r)
	}
	assertNoPartials(t, dir)
}

func TestRecordTraceWritesEveryCallback(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(t)
	opts.RecordDir = filepath.Join(dir, "traces")
	rep := runReport([]matrix.Build{simBuild(dir, "rec/one", nil)}, opts, nil)
	data, err := os.ReadFile(filepath.Join(opts.RecordDir, "rec_one.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); int64(lines) != rep.Builds[0].Callbacks {
		t.Errorf("recorded %d lines for %d callbacks", lines, rep.Builds[0].Callbacks)
	}
}

func TestGPUsGetOneBuildAtATime(t *testing.T) {
	dir := t.TempDir()
	var builds []matrix.Build
	for _, name := range []string{"a", "b", "c", "d"} {
		builds = append(builds, simBuild(dir, name, nil))
	}
	opts := testOptions(t)
	opts.Jobs = 4 // more than the GPUs: the pool must hold builds back
	opts.GPUs = gpus.NewPool([]string{"0", "1"}, 1)
	active, most := map[string]int{}, 0
	opts.OnEvent = func(ev event.Event) {
		switch ev.Kind {
		case event.BuildStarted:
			gpu := strings.TrimPrefix(ev.Message, "on GPU ")
			active[gpu]++
			most = max(most, active[gpu])
		case event.BuildFinished:
			active[ev.Result.GPU]--
		}
	}
	rep := runReport(builds, opts, nil)
	used := map[string]int{}
	for _, b := range rep.Builds {
		if b.Status != report.StatusOK || (b.GPU != "0" && b.GPU != "1") {
			t.Fatalf("%s: status %s on GPU %q", b.Name, b.Status, b.GPU)
		}
		used[b.GPU]++
	}
	if most != 1 {
		t.Errorf("at most %d builds ran at once on one GPU, want 1", most)
	}
	if used["0"] == 0 || used["1"] == 0 {
		t.Errorf("builds per GPU: %v, want both GPUs used", used)
	}
}

func TestCheckpointsAreThrottledButTheLastIsComplete(t *testing.T) {
	dir := t.TempDir()
	var builds []matrix.Build
	for i := range 12 {
		builds = append(builds, simBuild(dir, fmt.Sprintf("b%02d", i), func(b *matrix.Build) { b.Sim.Step = time.Microsecond }))
	}
	opts := testOptions(t)
	opts.Jobs = 4
	var calls []report.Report
	opts.Checkpoint = func(r *report.Report) { calls = append(calls, *r) }
	begin := time.Now()
	runReport(builds, opts, nil)
	took := time.Since(begin)
	// One at the start, one at the end, and at most one a second between.
	if limit := 2 + int(took/time.Second) + 1; len(calls) > limit {
		t.Errorf("%d checkpoints in %v, want at most %d", len(calls), took, limit)
	}
	last := calls[len(calls)-1]
	if !last.Complete || countStatus(last, report.StatusOK) != len(builds) {
		t.Errorf("last checkpoint: complete=%v, %d ok of %d", last.Complete, countStatus(last, report.StatusOK), len(builds))
	}
}

// A build's start is written to the report, within the checkpoints'
// limit, so the report of a run killed while it ran says it was running.
func TestTheReportSaysABuildIsRunning(t *testing.T) {
	dir := t.TempDir()
	hang := simBuild(dir, "hang", func(b *matrix.Build) {
		b.Sim.Fault = matrix.Fault{Kind: "hang"}
		b.Budgets.Build, b.Budgets.Grace = 1500*time.Millisecond, 200*time.Millisecond
	})
	opts := testOptions(t)
	var statuses []string
	opts.Checkpoint = func(r *report.Report) { statuses = append(statuses, r.Builds[0].Status) }
	begin := time.Now()
	runReport([]matrix.Build{hang}, opts, nil)
	took := time.Since(begin)
	if !slices.Contains(statuses, report.StatusRunning) {
		t.Errorf("checkpoints of a build that ran %v said %q, never running", took, statuses)
	}
	if limit := 2 + int(took/time.Second) + 1; len(statuses) > limit {
		t.Errorf("%d checkpoints in %v, want at most %d", len(statuses), took, limit)
	}
}

func countStatus(r report.Report, status string) int {
	n := 0
	for _, b := range r.Builds {
		if b.Status == status {
			n++
		}
	}
	return n
}

func TestSecondSIGINTKillsAndSaysSo(t *testing.T) {
	dir := t.TempDir()
	hang := simBuild(dir, "hang", func(b *matrix.Build) {
		b.Sim.Fault = matrix.Fault{Kind: "hang"}
		b.Budgets.Grace = time.Minute
	})
	signals := make(chan os.Signal, 2)
	opts := testOptions(t)
	opts.InterruptGrace = time.Minute // only the second SIGINT can end it
	sent := 0
	opts.OnEvent = func(ev event.Event) {
		// Once the build hangs (silent for a while), interrupt twice.
		if ev.Kind == event.Heartbeat && ev.Progress.Silent > 200*time.Millisecond && sent < 2 {
			sent++
			signals <- os.Interrupt
		}
	}
	begin := time.Now()
	b := runReport([]matrix.Build{hang}, opts, signals).Builds[0]
	if took := time.Since(begin); took > 20*time.Second {
		t.Errorf("took %v: the second SIGINT did not kill at once", took)
	}
	if b.Status != report.StatusKilled || !strings.Contains(b.Reason, "interrupted by SIGINT; killed by a second SIGINT") {
		t.Errorf("status %s, reason %q", b.Status, b.Reason)
	}
}

func TestABlockedViewDelaysNeitherSignalsNorKills(t *testing.T) {
	dir := t.TempDir()
	hang := simBuild(dir, "hang", func(b *matrix.Build) {
		b.Sim.Fault = matrix.Fault{Kind: "hang"}
		b.Sim.Step = 10 * time.Microsecond
	})
	signals := make(chan os.Signal, 1)
	opts := testOptions(t)
	opts.InterruptGrace = 300 * time.Millisecond
	const viewBlock = 6 * time.Second
	blocked := false
	var signalAt time.Duration // run time of the heartbeat that sent SIGINT
	opts.OnEvent = func(ev event.Event) {
		// Once the build hangs (silent), interrupt; then the view hangs too.
		if ev.Kind == event.Heartbeat && ev.Progress.Silent > 200*time.Millisecond && !blocked {
			blocked, signalAt = true, ev.At
			signals <- os.Interrupt // then the view hangs, like a paused pipe
			time.Sleep(viewBlock)
		}
	}
	b := runReport([]matrix.Build{hang}, opts, signals).Builds[0]
	if b.Status != report.StatusKilled {
		t.Fatalf("status %s (%s), want killed", b.Status, b.Reason)
	}
	// Killed after the 300ms grace, before the view woke up: the view took
	// the heartbeat (and began its 6s sleep) no sooner than the heartbeat's
	// time, so a build that ended within viewBlock of it ended while the
	// view slept. Measured from the signal, so a slow start-up does not
	// count; a relation, not a figure, so a loaded machine's slow kill
	// (a few hundred ms) does not count either.
	endMs, sentMs := b.StartMs+b.DurationMs, signalAt.Milliseconds()
	if limit := viewBlock.Milliseconds(); endMs-sentMs >= limit {
		t.Errorf("the build ended %dms after SIGINT, once the view had woken (%dms): the blocked view held up the kill", endMs-sentMs, limit)
	}
}

func TestAGPUWaitEndsWithTheRunBudget(t *testing.T) {
	dir := t.TempDir()
	slow := func(b *matrix.Build) { b.Sim.Step = time.Millisecond } // ~6 s
	builds := []matrix.Build{simBuild(dir, "first", slow), simBuild(dir, "second", slow)}
	opts := testOptions(t)
	opts.Jobs, opts.RunBudget = 2, 500*time.Millisecond
	opts.GPUs = gpus.NewPool([]string{"0"}, 1)
	begin := time.Now()
	rep := runReport(builds, opts, nil)
	// Loose on purpose: start-up and teardown vary on a loaded machine; the
	// statuses below are what show the budget held.
	if took := time.Since(begin); took > 15*time.Second {
		t.Errorf("the run took %v with a 500ms run budget", took)
	}
	// The first build (matrix order) got the GPU and ran into the run
	// budget, which cancels it (the run's limit, not the build's); the
	// second was still waiting for the GPU and never started.
	ran, waited := rep.Builds[0], rep.Builds[1]
	if ran.Status != report.StatusCancelled || ran.Budget == nil || ran.Budget.Kind != kindRun {
		t.Errorf("%s: %s %+v, want cancelled by the run budget", ran.Name, ran.Status, ran.Budget)
	}
	if waited.Status != report.StatusCancelled || !strings.Contains(waited.Reason, "not started: run budget") {
		t.Errorf("%s: %s (%s), want cancelled while waiting for the GPU", waited.Name, waited.Status, waited.Reason)
	}
}

// runReport is Run for tests that look only at the report.
func runReport(builds []matrix.Build, opts Options, signals <-chan os.Signal) *report.Report {
	rep, _ := Run(builds, opts, signals)
	return rep
}
