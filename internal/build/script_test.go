package build

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// scriptBuild is a script build that runs the test binary as a fake
// program playing scenario.
func scriptBuild(t *testing.T, name, scenario string, mod func(*matrix.Build)) matrix.Build {
	t.Helper()
	dir := t.TempDir()
	b := matrix.Build{Name: name, Backend: "tensorrt-rtx", Budgets: matrix.Budgets{Grace: 2 * time.Second},
		Script: &matrix.Script{Argv: []string{testExe(), "-test.run=^$"}, Workdir: dir,
			Env: []string{fakeHookEnv + "=" + scenario}}}
	if mod != nil {
		mod(&b)
	}
	return b
}

// withEngine declares an engine file the fake program writes.
func withEngine(path string) func(*matrix.Build) {
	return func(b *matrix.Build) {
		b.Script.Engines = []string{path}
		b.Script.Env = append(b.Script.Env, "FAKE_ENGINE="+path)
	}
}

func scriptOptions(t testing.TB) Options {
	opts := testOptions(t)
	opts.ReaperArgs = []string{reaperArg}
	opts.HookPath = t.TempDir() // the fake program needs no Python bootstrap; it reads the socket from the environment
	return opts
}

// runScripts runs builds and returns each one's entry as its end event
// carried it: whole (the report keeps an ended build without its trees).
func runScripts(t *testing.T, opts Options, builds ...matrix.Build) (map[string]report.Build, []event.Event) {
	t.Helper()
	var events []event.Event
	ended := map[string]report.Build{}
	opts.OnEvent = func(ev event.Event) {
		events = append(events, ev)
		if ev.Kind == event.BuildFinished {
			ended[ev.Name] = *ev.Result
		}
	}
	Run(builds, opts, nil)
	return ended, events
}

func TestAScriptBuildReportsItsTensorRTBuildAndEngine(t *testing.T) {
	engine := filepath.Join(t.TempDir(), "out.engine")
	got, events := runScripts(t, scriptOptions(t), scriptBuild(t, "script", "ok", withEngine(engine)))
	b := got["script"]
	if b.Status != report.StatusOK {
		t.Fatalf("status %s (%s)", b.Status, b.Reason)
	}
	if len(b.TensorRTBuilds) != 1 {
		t.Fatalf("%d TensorRT builds, want 1", len(b.TensorRTBuilds))
	}
	in := b.TensorRTBuilds[0]
	if in.Status != report.StatusOK || in.SerializedBytes != 1234 || in.Route != "python" || in.PID == 0 || in.Entry != "build_serialized_network" {
		t.Errorf("TensorRT build = %+v", in)
	}
	if in.Callbacks != 10 || len(in.PhaseTree) != 1 || in.PhaseTree[0].Name != "Building engine" {
		t.Errorf("callbacks %d, tree %+v", in.Callbacks, in.PhaseTree)
	}
	if in.Network == nil || in.Network.Layers != 2 || in.Network.Inputs[0].Name != "x" {
		t.Errorf("network = %+v", in.Network)
	}
	if len(b.Engines) != 1 || b.Engines[0].Path != engine || b.Engines[0].Bytes != int64(len("fake engine bytes")) {
		t.Errorf("engines = %+v", b.Engines)
	}
	if b.Script == nil || b.Script.ExitCode == nil || *b.Script.ExitCode != 0 || b.Script.Processes != 1 {
		t.Errorf("script = %+v", b.Script)
	}
	if !strings.Contains(strings.Join(b.Script.OutputTail, "\n"), "fake program: ok") {
		t.Errorf("output tail = %q", b.Script.OutputTail)
	}
	// A progress bar that redraws itself is kept as a terminal shows it last.
	if !slices.Contains(b.Script.OutputTail, "100%|███|") {
		t.Errorf("the progress bar's line is not its last state without colours: %q", b.Script.OutputTail)
	}
	kinds := map[event.EventKind]int{}
	for _, ev := range events {
		kinds[ev.Kind]++
		if ev.Kind == event.PhaseStarted && ev.Inner != 1 {
			t.Errorf("phase event of TensorRT build %d, want 1", ev.Inner)
		}
	}
	if kinds[event.InnerStarted] != 1 || kinds[event.InnerFinished] != 1 || kinds[event.Output] == 0 || kinds[event.PhaseStarted] != 2 {
		t.Errorf("events by kind: %v", kinds)
	}
}

func TestTwoBuildsAndAChildProcessAreEachABuild(t *testing.T) {
	got, _ := runScripts(t, scriptOptions(t),
		scriptBuild(t, "two", "two", nil), scriptBuild(t, "spawn", "spawn", nil))
	if b := got["two"]; b.Status != report.StatusOK || len(b.TensorRTBuilds) != 2 || b.TensorRTBuilds[1].Index != 2 {
		t.Errorf("two: %s (%s), %d builds", b.Status, b.Reason, len(b.TensorRTBuilds))
	}
	b := got["spawn"]
	if b.Status != report.StatusOK || len(b.TensorRTBuilds) != 2 || b.Script.Processes != 2 {
		t.Fatalf("spawn: %s (%s), %d builds, %d processes", b.Status, b.Reason, len(b.TensorRTBuilds), b.Script.Processes)
	}
	if b.TensorRTBuilds[0].PID == b.TensorRTBuilds[1].PID {
		t.Errorf("both builds in pid %d; the child's was its own", b.TensorRTBuilds[0].PID)
	}
}

func TestABuildBudgetStopsTheTensorRTBuildInside(t *testing.T) {
	got, _ := runScripts(t, scriptOptions(t),
		scriptBuild(t, "long", "long", func(b *matrix.Build) { b.Budgets.Build = 300 * time.Millisecond }),
		scriptBuild(t, "long-exit0", "long-exit0", func(b *matrix.Build) {
			b.Budgets.Phases = []matrix.PhaseBudget{{Pattern: "Timing tactics", Limit: 200 * time.Millisecond}}
		}))
	b := got["long"]
	if b.Status != report.StatusBudgetExceeded || b.Budget == nil || b.Budget.Kind != kindBuild {
		t.Fatalf("long: %s (%s), budget %+v", b.Status, b.Reason, b.Budget)
	}
	if in := b.TensorRTBuilds; len(in) != 1 || in[0].Status != report.StatusBudgetExceeded {
		t.Errorf("long's TensorRT build: %+v", in)
	}
	if b.DurationMs > 2000 {
		t.Errorf("a 300ms budget ended the command after %d ms", b.DurationMs)
	}
	b = got["long-exit0"]
	if b.Status != report.StatusBudgetExceeded || b.Budget == nil || b.Budget.Kind != kindPhase {
		t.Fatalf("long-exit0 (exits 0 after the stop): %s (%s)", b.Status, b.Reason)
	}
	if in := b.TensorRTBuilds; len(in) != 1 || in[0].Budget == nil || in[0].Budget.Phase != "Building engine/Timing tactics" {
		t.Errorf("long-exit0's TensorRT build names the phase budget: %+v", in)
	}
}

func TestTheExitCodeAloneNeverDecides(t *testing.T) {
	engine := filepath.Join(t.TempDir(), "never.engine")
	got, _ := runScripts(t, scriptOptions(t),
		scriptBuild(t, "none-exit0", "none-exit0", nil),
		scriptBuild(t, "crash", "crash", nil),
		scriptBuild(t, "unhooked", "unhooked", nil),
		scriptBuild(t, "no-engine", "unhooked", func(b *matrix.Build) { b.Script.Engines = []string{engine} }))
	if b := got["none-exit0"]; b.Status != report.StatusFailed || !strings.Contains(b.Reason, "TensorRT build 1 failed") {
		t.Errorf("a program that exits 0 after a failed build: %s (%s)", b.Status, b.Reason)
	}
	b := got["crash"]
	if b.Status != report.StatusCrashed || !strings.Contains(b.Reason, "SIGKILL") {
		t.Errorf("crash: %s (%s)", b.Status, b.Reason)
	}
	if in := b.TensorRTBuilds; len(in) != 1 || in[0].Status != report.StatusCrashed {
		t.Errorf("crash's TensorRT build: %+v", in)
	}
	b = got["unhooked"]
	if b.Status != report.StatusOK || len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "no TensorRT build was seen") {
		t.Errorf("unhooked: %s, warnings %q", b.Status, b.Warnings)
	}
	if b.Script.Unobserved == "" {
		t.Errorf("unhooked: no reason why nothing was observed")
	}
	if b := got["no-engine"]; b.Status != report.StatusFailed || !strings.Contains(b.Reason, "was not written") {
		t.Errorf("no-engine: %s (%s)", b.Status, b.Reason)
	}
}

// A program that falls back after a failed TensorRT build, exits 0 and
// writes every engine it declares is ok and keeps them; the failed build
// is named in a warning. Without a declared engine nothing shows that it
// recovered: failed, as before.
func TestAProgramThatFallsBackAndWritesItsEnginesIsOK(t *testing.T) {
	engine := filepath.Join(t.TempDir(), "fb.engine")
	got, _ := runScripts(t, scriptOptions(t),
		scriptBuild(t, "fallback", "fallback", withEngine(engine)),
		scriptBuild(t, "undeclared", "fallback", nil))
	b := got["fallback"]
	if b.Status != report.StatusOK || len(b.Engines) != 1 || b.Engines[0].Path != engine {
		t.Fatalf("fallback: %s (%s), engines %+v, warnings %q", b.Status, b.Reason, b.Engines, b.Warnings)
	}
	if _, err := os.Stat(engine); err != nil {
		t.Errorf("the engine the program wrote is gone: %v", err)
	}
	if len(b.TensorRTBuilds) != 2 || b.TensorRTBuilds[0].Status != report.StatusFailed || b.TensorRTBuilds[1].Status != report.StatusOK {
		t.Errorf("TensorRT builds: %+v", b.TensorRTBuilds)
	}
	// The fake's builds take the Python route with no native folder, which
	// has a warning of its own (scriptroute.go); one names the failure.
	failed := slices.DeleteFunc(slices.Clone(b.Warnings), func(w string) bool { return !strings.Contains(w, " failed") })
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "TensorRT build 1 failed: the library returned no engine;") {
		t.Errorf("warnings %q, want one naming TensorRT build 1's failure", b.Warnings)
	}
	if b := got["undeclared"]; b.Status != report.StatusFailed || !strings.Contains(b.Reason, "TensorRT build 1 failed") {
		t.Errorf("undeclared: %s (%s)", b.Status, b.Reason)
	}
}

func TestAGraceKillReachesAProcessThatLeftTheGroup(t *testing.T) {
	got, _ := runScripts(t, scriptOptions(t), scriptBuild(t, "escape", "escape", func(b *matrix.Build) {
		b.Budgets.Build, b.Budgets.Grace = 200*time.Millisecond, 200*time.Millisecond
	}))
	b := got["escape"]
	if b.Status != report.StatusBudgetExceeded || !strings.Contains(b.Reason, "killed") {
		t.Fatalf("escape: %s (%s)", b.Status, b.Reason)
	}
	pid := pidAfter(t, b.Script.OutputTail, "escaped child ")
	if processAlive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the child that left the process group (pid %d) outlived the build", pid)
	}
}

func TestNoProcessOutlivesTheCommand(t *testing.T) {
	engine := filepath.Join(t.TempDir(), "orphan.engine")
	got, _ := runScripts(t, scriptOptions(t), scriptBuild(t, "orphan", "orphan", withEngine(engine)))
	b := got["orphan"]
	pid := pidAfter(t, b.Script.OutputTail, "left child ")
	if processAlive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the child the command left (pid %d) outlived it", pid)
	}
	if b.Status != report.StatusOK || !strings.Contains(strings.Join(b.Warnings, "\n"), "1 process of the command still ran") {
		t.Errorf("orphan: %s (%s), warnings %q", b.Status, b.Reason, b.Warnings)
	}
}

// Under qemu-user (an arm64 release binary run on amd64) the kernel's
// answer to PR_SET_CHILD_SUBREAPER is EINVAL: the build still runs, and
// says what it can no longer promise.
func TestACommandRunsWhereTheKernelRefusesASubreaper(t *testing.T) {
	t.Setenv(noSubreaperEnv, "1")
	engine := filepath.Join(t.TempDir(), "out.engine")
	got, _ := runScripts(t, scriptOptions(t), scriptBuild(t, "no-subreaper", "ok", withEngine(engine)))
	b := got["no-subreaper"]
	if b.Status != report.StatusOK || len(b.Engines) != 1 {
		t.Fatalf("no subreaper: %s (%s), engines %+v", b.Status, b.Reason, b.Engines)
	}
	want := "the kernel refused to make trt-action's reaper a child subreaper (prctl PR_SET_CHILD_SUBREAPER: invalid argument;"
	said := slices.DeleteFunc(slices.Clone(b.Warnings), func(w string) bool { return !strings.Contains(w, "subreaper") })
	if len(said) != 1 || !strings.HasPrefix(said[0], want) {
		t.Errorf("warnings %q, want one starting %q", b.Warnings, want)
	}
}

func TestAStoppedBuildLeavesNoEngineItWroteAndKeepsOneItDidNot(t *testing.T) {
	dir := t.TempDir()
	untouched := filepath.Join(dir, "old.engine")
	if err := os.WriteFile(untouched, []byte("a good engine from before"), 0o644); err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(dir, "partial.engine")
	got, _ := runScripts(t, scriptOptions(t), scriptBuild(t, "orphan-failed", "orphan", func(b *matrix.Build) {
		withEngine(written)(b)
		b.Script.Engines = append(b.Script.Engines, untouched)
	}))
	b := got["orphan-failed"]
	if b.Status != report.StatusFailed || !strings.Contains(b.Reason, "left from before") {
		t.Fatalf("status %s (%s)", b.Status, b.Reason)
	}
	if _, err := os.Stat(written); !os.IsNotExist(err) {
		t.Errorf("the file the failed build wrote is still there (%v)", err)
	}
	if data, err := os.ReadFile(untouched); err != nil || string(data) != "a good engine from before" {
		t.Errorf("the engine from before was touched: %q, %v", data, err)
	}
}

func pidAfter(t *testing.T, lines []string, prefix string) int {
	t.Helper()
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			var pid int
			for _, c := range rest {
				if c < '0' || c > '9' {
					break
				}
				pid = pid*10 + int(c-'0')
			}
			return pid
		}
	}
	t.Fatalf("no line %q in %q", prefix, lines)
	return 0
}

// processAlive reports whether pid runs (a zombie does not count).
func processAlive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != 'Z'
}

func TestASignalStopsAScriptBuildAsItStopsAnyBuild(t *testing.T) {
	opts := scriptOptions(t)
	signals := make(chan os.Signal, 1)
	var events []event.Event
	opts.OnEvent = func(ev event.Event) {
		events = append(events, ev)
		if ev.Kind == event.InnerStarted {
			signals <- os.Interrupt
		}
	}
	rep, cause := Run([]matrix.Build{scriptBuild(t, "long", "long", nil)}, opts, signals)
	if cause == nil {
		t.Errorf("no cause for a run SIGINT stopped")
	}
	b := byName(rep)["long"]
	if b.Status != report.StatusCancelled || !strings.Contains(b.Reason, "SIGINT") {
		t.Fatalf("status %s (%s)", b.Status, b.Reason)
	}
	if in := b.TensorRTBuilds; len(in) != 1 || in[0].Status != report.StatusCancelled {
		t.Errorf("its TensorRT build: %+v", in)
	}
	// Stopped softly, through the hook channel, not killed after the grace.
	if strings.Contains(b.Reason, "killed") {
		t.Errorf("the command was killed, not stopped: %s", b.Reason)
	}
}

func TestAStallBudgetCountsOnlyInsideATensorRTBuild(t *testing.T) {
	got, _ := runScripts(t, scriptOptions(t),
		// Silent for 400 ms outside any build: a 100 ms stall budget does not apply there.
		scriptBuild(t, "quiet-outside", "quiet-then-build", func(b *matrix.Build) { b.Budgets.Stall = 150 * time.Millisecond }),
		// Silent inside a build: it does.
		scriptBuild(t, "quiet-inside", "silent-build", func(b *matrix.Build) {
			b.Budgets.Stall, b.Budgets.Grace = 150*time.Millisecond, 300*time.Millisecond
		}))
	if b := got["quiet-outside"]; b.Status != report.StatusOK {
		t.Errorf("quiet-outside: %s (%s)", b.Status, b.Reason)
	}
	b := got["quiet-inside"]
	if b.Status != report.StatusBudgetExceeded || b.Budget == nil || b.Budget.Kind != kindStall {
		t.Fatalf("quiet-inside: %s (%s) %+v", b.Status, b.Reason, b.Budget)
	}
	if !strings.HasPrefix(b.Reason, "TensorRT build 1: stalled: no progress callback for ") {
		t.Errorf("the script build's reason does not say which TensorRT build stalled: %q", b.Reason)
	}
	// The line of the TensorRT build that stalled names it once.
	in := b.TensorRTBuilds[0]
	line := report.InnerText(&in)
	peak := "" // its process's peak, when a look at it fell inside the build
	if p := report.MemoryPeakText(in.Memory); p != "" {
		peak = " · " + p
	}
	if want := fmt.Sprintf("TensorRT build 1: budget-exceeded after %s · python route · pid %d%s: stalled: no progress callback for ", text.DurationMs(in.DurationMs), in.PID, peak); !strings.HasPrefix(line, want) || strings.Count(line, "TensorRT build") != 1 {
		t.Errorf("the stall-kill line is\n%s\nwant it to begin\n%s\nand name the build once", line, want)
	}
}

// A command starts as a shell would start it: nothing blocked, no
// standard signal ignored (trt-action's own handlers are not inherited:
// exec resets them). Realtime signals (32 and up) are left out: C
// libraries and sanitizer runtimes (the race detector's) set those up in
// the program itself.
func TestACommandStartsWithNoSignalBlockedOrIgnored(t *testing.T) {
	got, _ := runScripts(t, scriptOptions(t), scriptBuild(t, "signals", "signals", nil))
	seen := 0
	for _, line := range got["signals"].Script.OutputTail {
		name, hex, ok := strings.Cut(line, ":\t")
		if !ok || (name != "SigBlk" && name != "SigIgn") {
			continue
		}
		seen++
		mask, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if standard := mask & (1<<31 - 1); standard != 0 {
			t.Errorf("%s: %#x: the command starts with standard signals %s", name, standard, name)
		}
	}
	if seen != 2 {
		t.Errorf("no SigBlk and SigIgn lines in %q", got["signals"].Script.OutputTail)
	}
}

// The job summary's timeline draws a TensorRT build inside a script build
// when it ran: its phases' times, as the supervisor records them, lie in
// its span on the run's clock, and a phase that never finished ends with
// it.
func TestTheTimelineDrawsATensorRTBuildWhenItRan(t *testing.T) {
	got, _ := runScripts(t, scriptOptions(t),
		scriptBuild(t, "late", "quiet-then-build", nil),
		scriptBuild(t, "stalled", "silent-build", func(b *matrix.Build) {
			b.Budgets.Stall, b.Budgets.Grace = 150*time.Millisecond, 200*time.Millisecond
		}))
	for _, name := range []string{"late", "stalled"} {
		b := got[name]
		if len(b.TensorRTBuilds) != 1 {
			t.Fatalf("%s: %d TensorRT builds", name, len(b.TensorRTBuilds))
		}
		in := b.TensorRTBuilds[0]
		from, to := b.StartMs+in.StartMs, b.StartMs+in.StartMs+in.DurationMs
		r := &report.Report{Version: report.SchemaVersion, Complete: true, DurationMs: b.StartMs + b.DurationMs, Builds: []report.Build{b}}
		summary := report.Summary(r, report.SummaryOptions{})
		_, chart, _ := strings.Cut(summary, "  section "+name+" (TensorRT build 1)")
		_, chart, _ = strings.Cut(chart, "\n") // after the section's name (with its peak, when one was seen)
		chart, _, _ = strings.Cut(chart, "```")
		bars := 0
		for _, line := range strings.Split(strings.TrimSpace(chart), "\n") {
			_, times, ok := strings.Cut(line, " :")
			startText, endText, ok2 := strings.Cut(strings.TrimPrefix(times, "crit, "), ", ")
			start, err1 := strconv.ParseInt(startText, 10, 64)
			end, err2 := strconv.ParseInt(endText, 10, 64)
			if !ok || !ok2 || err1 != nil || err2 != nil {
				t.Fatalf("%s: not a bar: %q in\n%s", name, line, summary)
			}
			bars++
			if start < from || end > to {
				t.Errorf("%s: %q drawn %d–%d ms; its TensorRT build ran %d–%d ms", name, line, start, end, from, to)
			}
			if name == "stalled" && end != to {
				t.Errorf("%s: %q never finished, yet does not end with its build at %d ms", name, line, to)
			}
		}
		if bars == 0 {
			t.Errorf("%s: no bars for its TensorRT build in\n%s", name, summary)
		}
	}
}

// A script build's callbacks are every callback of its TensorRT builds,
// and its longest silence the longest of theirs: not the command's whole
// time, outside which a program may rightly be silent.
func TestAScriptBuildsCallbacksAndSilenceAreItsTensorRTBuilds(t *testing.T) {
	got, _ := runScripts(t, scriptOptions(t), scriptBuild(t, "quiet-then-build", "quiet-then-build", nil))
	b := got["quiet-then-build"]
	if len(b.TensorRTBuilds) != 1 {
		t.Fatalf("%d TensorRT builds", len(b.TensorRTBuilds))
	}
	in := b.TensorRTBuilds[0]
	if in.Callbacks == 0 || b.Callbacks != in.Callbacks {
		t.Errorf("callbacks %d, its TensorRT build's %d", b.Callbacks, in.Callbacks)
	}
	// 400 ms of silence before the build, which is not the build's.
	if b.LongestSilenceMs != in.LongestSilenceMs || b.LongestSilenceMs >= b.DurationMs {
		t.Errorf("longest silence %d ms, its TensorRT build's %d ms (the command ran %d ms)", b.LongestSilenceMs, in.LongestSilenceMs, b.DurationMs)
	}
}

// Why no TensorRT build was seen is said when it can be: for a command
// in which processes loaded the hook (the builds were elsewhere: a child
// the hook could not enter), in the warning; the paragraph on how the
// hook gets in is for a command that ran and in which none did, not for
// one that could not start.
func TestWhyNoTensorRTBuildWasSeen(t *testing.T) {
	got, _ := runScripts(t, scriptOptions(t),
		scriptBuild(t, "observed", "no-build", nil),
		scriptBuild(t, "missing", "ok", func(b *matrix.Build) { b.Script.Argv = []string{filepath.Join(t.TempDir(), "no-such-program")} }))
	b := got["observed"]
	want := "no TensorRT build was seen in the command: 1 process of the command loaded trt-action's hook and began no TensorRT build"
	if b.Status != report.StatusOK || len(b.Warnings) != 1 || !strings.HasPrefix(b.Warnings[0], want) || !strings.Contains(b.Warnings[0], "-I or -E") {
		t.Errorf("observed: %s, warnings %q; want one starting %q and naming -I", b.Status, b.Warnings, want)
	}
	if b.Script.Unobserved != "" {
		t.Errorf("observed: a process was observed, yet unobserved = %q", b.Script.Unobserved)
	}
	b = got["missing"]
	if b.Status != report.StatusFailed || !strings.Contains(b.Reason, "could not start") || b.Script.Unobserved != "" {
		t.Errorf("missing: %s (%s), unobserved %q; want failed and no word on the hook", b.Status, b.Reason, b.Script.Unobserved)
	}
}
