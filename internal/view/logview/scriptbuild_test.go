package logview

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/actions/actionstest"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// scriptBuildEvents is what the supervisor tells the views of build idx
// when it runs a command (b, a script build), from start: its output lines
// spread over its time, and for each TensorRT build inside it, its start,
// its phases (two levels deep) and heartbeats, and its end, a budget
// warning and stop before a build a budget stopped.
func scriptBuildEvents(idx int, b report.Build, start time.Duration) []event.Event {
	ev := func(kind event.EventKind, offMs int64) event.Event {
		return event.Event{Kind: kind, At: start + ms(offMs), Build: idx, Name: b.Name}
	}
	out := []event.Event{ev(event.BuildStarted, 0)}
	for i, line := range b.Script.OutputTail {
		e := ev(event.Output, 300+int64(i)*(b.DurationMs-500)/int64(len(b.Script.OutputTail)))
		e.Message = line
		out = append(out, e)
	}
	for _, t := range b.TensorRTBuilds {
		at := func(kind event.EventKind, offMs int64) event.Event {
			e := ev(kind, t.StartMs+offMs)
			e.Inner = t.Index
			return e
		}
		started := at(event.InnerStarted, 0)
		started.Message = fmt.Sprintf("pid %d · %s · %s route", t.PID, t.Entry, t.Route)
		out = append(out, started)
		root, opt := []string{"Building engine"}, []string{"Building engine", "Optimizing graph"}
		phase := func(kind event.EventKind, offMs int64, path []string, done, steps int, elapsedMs int64) {
			e := at(kind, offMs)
			e.Path, e.Done, e.Steps, e.Elapsed = path, done, steps, ms(elapsedMs)
			out = append(out, e)
		}
		phase(event.PhaseStarted, 100, root, 0, 6, 0)
		phase(event.PhaseStarted, 200, opt, 0, 33, 0)
		phase(event.PhaseFinished, 4000, opt, 28, 33, 3800)
		for off := int64(500); off < t.DurationMs; off += 1000 {
			e := at(event.Heartbeat, off)
			e.Progress = &event.Progress{Elapsed: ms(t.StartMs + off), Callbacks: off, BudgetLeft: -1,
				Active: []event.ActivePhase{{Name: "Building engine", Done: 1, Steps: 6, Elapsed: ms(off - 100)}},
				Inner:  t.Index, InnerRunning: 1, InnerDone: t.Index - 1}
			out = append(out, e)
		}
		if report.Succeeded(t.Status) {
			phase(event.PhaseFinished, t.DurationMs-100, root, 6, 6, t.DurationMs-200)
		} else if t.Budget != nil {
			w := at(event.BudgetWarning, t.DurationMs/2)
			w.Message = "phase Timing tactics used 80% of its 10s budget"
			s := at(event.Stopping, t.DurationMs-200)
			s.Message = t.Reason
			out = append(out, w, s)
		}
		done := at(event.InnerFinished, t.DurationMs)
		done.InnerResult = &t
		out = append(out, done)
	}
	finished := ev(event.BuildFinished, b.DurationMs)
	finished.Result = &b
	out = append(out, finished)
	slices.SortStableFunc(out, func(x, y event.Event) int { return int(x.At - y.At) })
	return out
}

// scriptRun is reporttest.Scripts run one build after another.
func scriptRun(r *report.Report) []event.Event {
	events := []event.Event{{Kind: event.RunStarted, Build: -1, Total: len(r.Builds)}}
	for i, b := range r.Builds {
		if b.Script == nil {
			events = append(events, script(i, b, ms(b.StartMs))...)
			continue
		}
		events = append(events, scriptBuildEvents(i, b, ms(b.StartMs))...)
	}
	return append(events, event.Event{Kind: event.RunFinished, At: ms(r.DurationMs), Build: -1, Run: r})
}

func TestPlainViewOfScriptBuildsGolden(t *testing.T) {
	var out bytes.Buffer
	if err := play(NewPlainView(&out, PlainOptions{}), scriptRun(reporttest.Scripts())); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	golden.Check(t, "plain-scripts.golden", got)
	for _, want := range []string{
		"[yolo-export]     0.3s  │ Ultralytics 8.3.40",
		"▶ TensorRT build 2 started: pid 4711 · build_serialized_network · python route",
		"#2 ┌ Building engine (6 steps)",
		"▸ TensorRT build 2 of 2 so far: Building engine 1/6",
		"✖ TensorRT build 2: budget-exceeded after 15.0s",
		"[mnist-isolated] ✔ ok in 3.1s — exit 0 · no TensorRT build seen — engine out/mnist.engine (1.6 MB)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plain view lacks %q", want)
		}
	}
}

func TestActionsViewOfScriptBuildsGolden(t *testing.T) {
	var out bytes.Buffer
	f := testFence(t)
	if err := play(NewActionsView(&out, f, ActionsOptions{Jobs: 1, File: "matrix.yaml"}), scriptRun(reporttest.Scripts())); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	golden.Check(t, "actions-scripts.golden", got)
	assertInert(t, got, f)
	// The output sits in its build's group.
	group := got[strings.Index(got, "::group::yolo-export"):]
	group = group[:strings.Index(group, "::endgroup::")]
	if !strings.Contains(group, "│ TypeError: a bytes-like object is required") {
		t.Errorf("the output is not in its build's group:\n%s", group)
	}
	if !strings.Contains(got, "::error file=matrix.yaml,title=trt-action%3A yolo-export budget-exceeded::") ||
		!strings.Contains(got, "%0Acommand python3 export.py --model yolo11n.pt --dynamic: exit status 1; 2 TensorRT builds%0A") {
		t.Errorf("the annotation of the failed script build does not say what went wrong inside:\n%s", got)
	}
}

// A command that prints far more than a log should hold shows its first
// lines as they come, then a note, and when it ends how many lines were
// left out and the last of them (the report's tail).
func TestScriptOutputIsBounded(t *testing.T) {
	b := reporttest.UnobservedScript(0)
	const printed = report.LiveOutputLines + 5_000
	b.Script.OutputTail = nil
	for i := printed - 50; i < printed; i++ {
		b.Script.OutputTail = append(b.Script.OutputTail, fmt.Sprintf("line %d", i))
	}
	events := []event.Event{{Kind: event.BuildStarted, Name: b.Name}}
	for i := range printed {
		events = append(events, event.Event{Kind: event.Output, At: ms(int64(i)), Name: b.Name, Message: fmt.Sprintf("line %d %s", i, strings.Repeat("x", 2*report.OutputLineRunes))})
	}
	events = append(events, event.Event{Kind: event.BuildFinished, At: ms(printed), Name: b.Name, Result: &b})
	var out bytes.Buffer
	if err := play(NewPlainView(&out, PlainOptions{}), events); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n := strings.Count(got, "│ line "); n != report.LiveOutputLines+50 {
		t.Errorf("%d lines of output shown, want the first %d and the last 50", n, report.LiveOutputLines)
	}
	for _, want := range []string{
		fmt.Sprintf("│ line %d x", report.LiveOutputLines-1),
		"│ … more output than the 1000 lines shown as it comes; its last lines follow when the build ends\n",
		"│ … 4950 lines of output not shown; the last 50:\n",
		fmt.Sprintf("│ line %d\n", printed-1),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(got, fmt.Sprintf("│ line %d x", report.LiveOutputLines)) {
		t.Error("a line past the cap was shown as it came")
	}
	for _, l := range strings.Split(got, "\n") {
		if n := len([]rune(l)); n > report.OutputLineRunes+40 {
			t.Fatalf("a line of %d runes: output lines are cut to %d", n, report.OutputLineRunes)
		}
	}
}

// What a command prints, and the phase names of the TensorRT builds
// inside it, cannot run a workflow command, in the Actions view (fenced)
// or the plain one (neutralised).
func TestScriptOutputCannotRunCommands(t *testing.T) {
	f := testFence(t)
	hostile := []string{
		"::error::owned", "##[error]owned", "  ::warning title=x::y", "::stop-commands::abc", f.End(),
		"::endgroup::", "\r::notice::after a carriage return", "x\n::set-output name=a::b", "##[group]g",
		"::add-mask::secret", "\x1b[31m::error::in colour\x1b[0m",
	}
	r := reporttest.Scripts()
	r.Builds[1].Script.OutputTail = hostile
	r.Builds[1].TensorRTBuilds[0].Reason = "::error::inner reason\n##[warning]x"
	events := scriptRun(r)
	for i := range events {
		e := &events[i]
		for j, p := range e.Path {
			e.Path[j] = p + "\n::error::phase " + p + " ##[warning]w"
		}
		if e.Kind == event.InnerStarted {
			e.Message = "::error::pid 1\n##[error]x"
		}
	}
	for _, jobs := range []int{1, 2} {
		var out bytes.Buffer
		if err := play(NewActionsView(&out, f, ActionsOptions{Jobs: jobs}), events); err != nil {
			t.Fatal(err)
		}
		assertInert(t, out.String(), f)
		if !strings.Contains(out.String(), "owned") {
			t.Fatal("the hostile output is not in the log at all")
		}
	}
	var plain bytes.Buffer
	if err := play(NewPlainView(&plain, PlainOptions{}), events); err != nil {
		t.Fatal(err)
	}
	if cmds := actionstest.RunnerCommands(plain.String()); len(cmds) > 0 {
		t.Errorf("plain view output runs %q", cmds)
	}
}
