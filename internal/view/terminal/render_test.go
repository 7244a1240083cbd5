package terminal

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report"
)

// visible shows escape sequences in golden files: ␛ stands for ESC, ␍ for
// a carriage return.
func visible(s string) string {
	return strings.NewReplacer("\x1b", "␛", "\r", "␍").Replace(s)
}

// renderState draws one frame (tests only; the view draws with renderFit) of the live area: a result line per finished
// build, then each running build's header and its active phases as nested
// bars, then how many builds wait, then the stopping state. No line is
// wider than width cells. Colour codes appear only when color is set.
func renderState(s runState, width int, color bool) []string {
	return all.render(s, width, color)
}

// checkGolden compares a frame with testdata/name.golden, escape sequences
// made visible.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name+".golden", visible(got))
}

func frame(lines []string) string { return strings.Join(lines, "\n") + "\n" }

const s = time.Second

// ev builders keep the scenarios readable.
func started(at time.Duration, i int, name string) event.Event {
	return event.Event{Kind: event.BuildStarted, At: at, Build: i, Name: name}
}

func beat(at time.Duration, i int, elapsed, budgetLeft time.Duration, budget string, chain ...event.ActivePhase) event.Event {
	return event.Event{Kind: event.Heartbeat, At: at, Build: i, Progress: &event.Progress{
		Elapsed: elapsed, Active: chain, BudgetLeft: budgetLeft, BudgetName: budget,
	}}
}

func ph(name string, done, steps int, elapsed time.Duration) event.ActivePhase {
	return event.ActivePhase{Name: name, Done: done, Steps: steps, Elapsed: elapsed}
}

func finished(at time.Duration, i int, name, status string, d time.Duration, reason string) event.Event {
	return event.Event{Kind: event.BuildFinished, At: at, Build: i, Name: name, Result: &report.Build{
		Name: name, Status: status, DurationMs: d.Milliseconds(), Reason: reason,
	}}
}

// withMemory puts what the build's processes hold on a heartbeat.
func withMemory(ev event.Event, m event.MemoryUse) event.Event {
	ev.Progress.Memory = &m
	return ev
}

// withPeak puts a peak on a finished build.
func withPeak(ev event.Event, host int64) event.Event {
	ev.Result.Memory = &report.Memory{PeakHostBytes: host, HostSource: report.MemoryFromProc}
	return ev
}

// trtChain is a real TensorRT 10.16 active chain, five levels deep.
func trtChain(scale time.Duration) []event.ActivePhase {
	return []event.ActivePhase{
		ph("Building engine", 3, 6, 40*scale),
		ph("Building engine from subgraph", 0, 1, 38*scale),
		ph("Computing profile costs", 0, 10, 30*scale),
		ph("Timing tactics", 1, 3, 20*scale),
		ph("Timing graph nodes", 7, 12, 5*scale),
	}
}

// nested: one finished build, two running ones (one with a baseline ETA and
// a build budget, one with an ETA from its progress), two waiting.
func nestedState() runState {
	var st runState
	st.Baseline = map[string]time.Duration{"resnet50-fp16-bs8": 90 * s}
	for _, e := range []event.Event{
		{Kind: event.RunStarted, Total: 5},
		started(0, 0, "mnist-fp32"),
		started(0, 1, "resnet50-fp16-bs8"),
		started(2*s, 2, "bert-large-int8-seq384-dynamic-shapes"),
		withPeak(finished(12*s, 0, "mnist-fp32", report.StatusOK, 12*s, ""), 812_300_000),
		withMemory(beat(42*s, 1, 42*s, 138*s, "build", trtChain(s)...),
			event.MemoryUse{Host: 3_210_000_000, PeakHost: 4_120_000_000, GPU: 1_530_000_000, PeakGPU: 2_010_000_000, HasGPU: true}),
		withMemory(beat(42*s, 2, 40*s, -1, "", ph("Building engine", 2, 6, 36*s), ph("Optimizing graph", 14, 33, 9*s)),
			event.MemoryUse{Host: 912_000_000, PeakHost: 912_000_000}),
	} {
		st.apply(e)
	}
	st.Now = 42*s + 300*time.Millisecond
	return st
}

// many: ten running builds and twenty finished ones.
func manyState() runState {
	var st runState
	st.apply(event.Event{Kind: event.RunStarted, Total: 30})
	for i := range 30 {
		name := fmt.Sprintf("model-%02d-fp16", i)
		st.apply(started(time.Duration(i)*s, i, name))
	}
	for i := range 20 {
		status, reason := report.StatusOK, ""
		if i%7 == 3 {
			status, reason = report.StatusFailed, "parser rejected the model"
		}
		st.apply(finished(time.Duration(30+i)*s, i, fmt.Sprintf("model-%02d-fp16", i), status, time.Duration(20+i)*s, reason))
	}
	for i := 20; i < 30; i++ {
		st.apply(beat(60*s, i, time.Duration(60-i)*s, -1, "",
			ph("Building engine", 1, 6, 20*s), ph("Building engine from subgraph", 0, 1, 18*s), ph("Optimizing graph", i, 33, 3*s)))
	}
	return st
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name  string
		state runState
		width int
		color bool
	}{
		{"nested", nestedState(), 100, false},
		{"nested_color", nestedState(), 100, true},
		{"nested_80", nestedState(), 80, false},
		{"narrow_30", nestedState(), 30, false},
		{"many", manyState(), 80, false},
		{"early_finish", earlyFinishState(), 80, false},
		{"budget_color", budgetState(), 80, true},
		{"stopping", stoppingState(), 80, false},
		{"stopping_color", stoppingState(), 80, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lines := renderState(tc.state, tc.width, tc.color)
			assertFits(t, lines, tc.width)
			checkGolden(t, "render_"+tc.name, frame(lines))
		})
	}
}

func TestRenderFitKeepsTheFrameOnScreen(t *testing.T) {
	st := manyState()
	full := renderState(st, 80, false)
	if len(full) != 20+10*4 {
		t.Fatalf("full frame has %d lines, want 60 (20 results, 10 builds with 3 phases)", len(full))
	}
	lines := renderFit(st, 80, 23, false)
	if len(lines) > 23 {
		t.Fatalf("RenderFit gave %d lines for a height of 23", len(lines))
	}
	checkGolden(t, "render_many_fit_23", frame(lines))

	// A roomy terminal gets the whole frame.
	if got := renderFit(st, 80, 100, false); len(got) != len(full) {
		t.Errorf("RenderFit with room to spare gave %d lines, want %d", len(got), len(full))
	}
	// A tiny one still gets no more lines than it has.
	if got := renderFit(st, 80, 3, false); len(got) != 3 {
		t.Errorf("RenderFit for 3 lines gave %d", len(got))
	}
	// Even then a stop request stays visible.
	st.apply(event.Event{Kind: event.Stopping, At: st.Now, Build: -1})
	if got := renderFit(st, 80, 3, false); len(got) != 3 || !strings.Contains(got[2], stopHint) {
		t.Errorf("RenderFit for 3 lines while stopping = %q", got)
	}
}

// earlyFinish: a phase finished at 28 of 33 steps between two heartbeats;
// its bar must go at once instead of hanging at 28/33, and a phase started
// after it shows before the next heartbeat.
func earlyFinishState() runState {
	var st runState
	for _, e := range []event.Event{
		{Kind: event.RunStarted, Total: 1},
		started(0, 0, "yolo-v8n"),
		beat(10*s, 0, 10*s, -1, "", ph("Building engine", 2, 6, 10*s), ph("Building engine from subgraph", 0, 1, 8*s), ph("Optimizing graph", 27, 33, 4*s)),
		{Kind: event.PhaseFinished, At: 10*s + 50*time.Millisecond, Build: 0, Path: []string{"Building engine", "Building engine from subgraph", "Optimizing graph"}, Done: 28, Steps: 33},
		{Kind: event.PhaseStarted, At: 10*s + 60*time.Millisecond, Build: 0, Path: []string{"Building engine", "Building engine from subgraph", "Computing profile costs"}, Steps: 10},
	} {
		st.apply(e)
	}
	st.Now = 10*s + 90*time.Millisecond
	return st
}

func TestPhaseEventsBetweenHeartbeats(t *testing.T) {
	st := earlyFinishState()
	got := st.Builds[0].Beat.Active
	if len(got) != 3 || got[2].Name != "Computing profile costs" || got[2].Steps != 10 {
		t.Fatalf("chain after finish+start = %+v", got)
	}
	// The new phase started 30ms before Now: that is what it must show.
	if e := got[2].Elapsed + drift(st, &st.Builds[0]); e != 30*time.Millisecond {
		t.Errorf("new phase elapsed = %v, want 30ms", e)
	}
	// A phase event for a chain we do not hold changes nothing.
	st.apply(event.Event{Kind: event.PhaseFinished, At: st.Now, Build: 0, Path: []string{"Other root"}})
	if len(st.Builds[0].Beat.Active) != 3 {
		t.Error("a finish outside the chain cut it")
	}
}

// budgetState: one build warned (yellow), one past its budget (red).
func budgetState() runState {
	var st runState
	for _, e := range []event.Event{
		{Kind: event.RunStarted, Total: 2},
		started(0, 0, "warned"),
		started(0, 1, "over"),
		beat(50*s, 0, 50*s, 10*s, "build", ph("Building engine", 3, 6, 49*s)),
		{Kind: event.BudgetWarning, At: 50 * s, Build: 0, Message: "build budget 80% used"},
		beat(50*s, 1, 50*s, 0, "phase Timing tactics", ph("Building engine", 3, 6, 49*s), ph("Timing tactics", 1, 3, 30*s)),
	} {
		st.apply(e)
	}
	return st
}

func TestBudgetWarningClearsWhenTheBudgetChanges(t *testing.T) {
	st := budgetState()
	if budgetStyle(st, &st.Builds[0]) != yellow || budgetStyle(st, &st.Builds[1]) != red {
		t.Fatalf("styles = %v, %v; want yellow, red", budgetStyle(st, &st.Builds[0]), budgetStyle(st, &st.Builds[1]))
	}
	st.apply(beat(51*s, 0, 51*s, 40*s, "phase Timing tactics", ph("Building engine", 3, 6, 50*s)))
	if got := budgetStyle(st, &st.Builds[0]); got != plain {
		t.Errorf("after the nearest budget changed the style is %v, want plain", got)
	}
}

func stoppingState() runState {
	st := nestedState()
	st.apply(event.Event{Kind: event.Stopping, At: st.Now, Build: 1, Message: "build budget of 3m passed"})
	st.apply(event.Event{Kind: event.Stopping, At: st.Now, Build: -1, Message: "SIGINT: stopping builds gracefully"})
	return st
}

func TestStoppingState(t *testing.T) {
	lines := renderState(stoppingState(), 80, false)
	if last := lines[len(lines)-1]; !strings.Contains(last, stopHint) {
		t.Errorf("last line %q does not show %q", last, stopHint)
	}
}

// A narrow terminal shows the short hint whole rather than the long one cut.
func TestStopHintFitsTheWidth(t *testing.T) {
	st := stoppingState()
	for w := 20; w <= 100; w++ {
		last := renderState(st, w, false)
		hint := last[len(last)-1]
		full := width("■ "+stopHint) <= w
		switch {
		case full && !strings.HasPrefix(hint, "■ "+stopHint):
			t.Errorf("at %d cells the stop line is %q, want the full hint", w, hint)
		case !full && width("■ "+shortStopHint) <= w && !strings.HasPrefix(hint, "■ "+shortStopHint):
			t.Errorf("at %d cells the stop line is %q, want the short hint", w, hint)
		case width(hint) > w:
			t.Errorf("at %d cells the stop line %q is wider", w, hint)
		}
	}
}

func TestStopReasonLeavesOutTheHint(t *testing.T) {
	for msg, want := range map[string]string{
		"SIGINT: stopping every build (up to 1.5s); press Ctrl-C again to kill": "SIGINT: stopping every build (up to 1.5s)",
		"run budget of 30m passed":   "run budget of 30m passed",
		"press Ctrl-C again to kill": "",
		"a; Ctrl-C kills; b\x1b[2J":  "a; b[2J",
	} {
		if got := stopReason(msg); got != want {
			t.Errorf("stopReason(%q) = %q, want %q", msg, got, want)
		}
	}
}

var escapes = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

func assertFits(t *testing.T, lines []string, w int) {
	t.Helper()
	for _, l := range lines {
		if n := width(escapes.ReplaceAllString(l, "")); n > w {
			t.Errorf("line is %d cells wide, more than %d: %q", n, w, l)
		}
	}
}

func TestEveryWidthFits(t *testing.T) {
	run := finalReport()
	for _, st := range []runState{nestedState(), manyState(), stoppingState(), budgetState(), earlyFinishState()} {
		for w := 10; w <= 130; w++ {
			assertFits(t, renderState(st, w, true), w)
			assertFits(t, renderFinal(run, w, true), w)
		}
	}
}

func TestNamesCannotInjectEscapes(t *testing.T) {
	var st runState
	st.apply(started(0, 0, "evil\x1b[2J\rname"))
	st.apply(beat(s, 0, s, -1, "", ph("phase\x1b]0;title\a", 0, 1, s)))
	for _, l := range renderState(st, 80, false) {
		if strings.ContainsAny(l, "\x1b\r\a") {
			t.Errorf("control character reached the frame: %q", l)
		}
	}
}

func TestNarrowNamesAreEllipsized(t *testing.T) {
	lines := renderState(nestedState(), 30, false)
	joined := strings.Join(lines, "\n")
	if !strings.Contains(joined, "…") {
		t.Errorf("no name was shortened at 30 columns:\n%s", joined)
	}
}

func finalReport() *report.Report {
	return &report.Report{
		DurationMs: 252_000, Complete: false, Interrupted: "SIGINT after 4m12s",
		Builds: []report.Build{
			{Name: "mnist-fp32", Status: report.StatusOK, DurationMs: 12_000, Memory: &report.Memory{PeakHostBytes: 812_300_000}, Phases: []*report.Phase{
				{Name: "Building engine", StartMs: 0, EndMs: 11_900, Children: []*report.Phase{
					{Name: "Cloning network graph", StartMs: 0, EndMs: 400},
					{Name: "Building engine from subgraph", StartMs: 500, EndMs: 11_800, Children: []*report.Phase{
						{Name: "Optimizing graph", StartMs: 500, EndMs: 2_000},
						{Name: "Computing profile costs", StartMs: 2_000, EndMs: 11_700, Children: []*report.Phase{
							{Name: "Timing tactics", StartMs: 2_000, EndMs: 11_000},
						}},
					}},
				}},
			}},
			{Name: "resnet50-fp16-bs8", Status: report.StatusBudgetExceeded, DurationMs: 180_000,
				Memory: &report.Memory{PeakHostBytes: 4_120_000_000, PeakGPUBytes: 2_010_000_000},
				Reason: "the build budget of 3m passed in phase Timing tactics", Phases: []*report.Phase{
					{Name: "Building engine", StartMs: 0, EndMs: -1, Children: []*report.Phase{
						{Name: "Optimizing graph", StartMs: 0, EndMs: 30_000},
						{Name: "Computing profile costs", StartMs: 30_000, EndMs: -1},
					}},
				}},
			{Name: "bert-large-int8-seq384-dynamic-shapes", Status: report.StatusCancelled, DurationMs: 60_000,
				Reason: "cancelled by SIGINT"},
		},
	}
}

func TestRenderFinalGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		width int
		color bool
	}{{"final", 100, false}, {"final_color", 100, true}, {"final_60", 60, false}, {"final_30", 30, false}} {
		t.Run(tc.name, func(t *testing.T) {
			checkGolden(t, "render_"+tc.name, frame(renderFinal(finalReport(), tc.width, tc.color)))
		})
	}
}

func TestSlowestPhaseFollowsTheTime(t *testing.T) {
	b := finalReport().Builds
	if got := slowestPhase(b[0]); got != "Timing tactics 9.0s" {
		t.Errorf("slowest phase = %q, want the phase that holds the time", got)
	}
	// An unfinished phase ran until the build ended: 150s of 180s.
	if got := slowestPhase(b[1]); got != "Computing profile costs 2m30s" {
		t.Errorf("slowest phase = %q", got)
	}
	if got := slowestPhase(b[2]); got != "" {
		t.Errorf("slowest phase without phases = %q", got)
	}
}

// A finished build stays on screen for the rest of the run; the view keeps
// of it only what it shows, not its phase trees and log lines.
func TestFinishedBuildKeepsOnlyWhatItShows(t *testing.T) {
	ev := finished(time.Second, 0, "a", report.StatusFailed, time.Second, "why")
	ev.Result.PhaseTree = []*report.PhaseNode{{Name: "Building engine", Count: 1}}
	ev.Result.Log = []report.LogLine{{Severity: "error", Text: "boom"}}
	var s runState
	s.apply(ev)
	want := report.Build{Name: "a", Status: report.StatusFailed, DurationMs: 1000}
	if got := s.Builds[0].Result; got == nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("kept %+v, want %+v", got, want)
	}
}

// Warnings (event.Warning, such as the engine cache's) print above the
// live area, wrapped rather than cut, a build's with its name and the
// run's without; text the run does not control cannot move the cursor.
func TestRenderWarningsGolden(t *testing.T) {
	warnings := []event.Event{
		{Kind: event.Warning, Build: 0, Name: "resnet50-fp16-bs8", Message: `engine cache: entry 3f2a… was corrupt (sha256 mismatch: the file is 12.3 MB, its entry says 12.4 MB) and was removed; building`},
		{Kind: event.Warning, Build: -1, Message: "engine cache: max-size 1.0 GB is too small for this run's engines: 2 engines stored in this run already evicted (built again next run); raise max-size"},
		{Kind: event.Warning, Build: 2, Name: "evil\x1b[2J\x1b[Hname", Message: "a message\rthat\x1b[31m moves nothing"},
		{Kind: event.Warning, Build: 3, Name: "w", Message: strings.Repeat("x", 130)},
	}
	for _, tc := range []struct {
		name  string
		width int
		color bool
	}{{"warnings", 60, false}, {"warnings_color", 60, true}, {"warnings_30", 30, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			for _, ev := range warnings {
				got := warningLines(ev, tc.width, tc.color)
				for _, l := range got {
					if w := visibleWidth(l); w > tc.width {
						t.Errorf("line %q is %d cells wide, over %d", l, w, tc.width)
					}
				}
				lines = append(lines, got...)
			}
			checkGolden(t, "render_"+tc.name, frame(lines))
		})
	}
}
