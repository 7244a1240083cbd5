package logview

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/actions/actionstest"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

func testFence(t testing.TB) actions.Fence {
	t.Helper()
	seq := make([]byte, 16)
	for i := range seq {
		seq[i] = byte(0xa0 + i)
	}
	f, err := actions.NewFence(bytes.NewReader(seq))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func play(v event.View, events []event.Event) error {
	for _, ev := range events {
		v.Handle(ev)
	}
	return v.Close()
}

func TestPlainViewGolden(t *testing.T) {
	var out bytes.Buffer
	if err := play(NewPlainView(&out, PlainOptions{}), runScript(reporttest.Sample(), false)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "plain.golden", out.String())
}

func TestActionsViewSequentialGolden(t *testing.T) {
	var out bytes.Buffer
	v := NewActionsView(&out, testFence(t), ActionsOptions{Jobs: 1, File: "matrix.yaml"})
	if err := play(v, runScript(reporttest.Sample(), false)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "actions-sequential.golden", out.String())
	assertInert(t, out.String(), testFence(t))
}

func TestActionsViewParallelGolden(t *testing.T) {
	var out bytes.Buffer
	v := NewActionsView(&out, testFence(t), ActionsOptions{Jobs: 2})
	if err := play(v, runScript(reporttest.Parallel(), true)); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	golden.Check(t, "actions-parallel.golden", got)
	assertInert(t, got, testFence(t))
	// Each build's lines form one unbroken group.
	for _, name := range []string{"resnet-fp16", "yolo_v8"} {
		first, last := strings.Index(got, "["+name+"]"), strings.LastIndex(got, "["+name+"]")
		if strings.Contains(got[first:last], "::endgroup::") {
			t.Errorf("the lines of %s are split across groups", name)
		}
	}
	if n := strings.Count(got, "⏳ "); n < 2 {
		t.Errorf("%d status lines in a 35 s parallel run; want one every 15 s", n)
	}
}

// heartbeatLines counts heartbeat lines ("▸") per build name.
var heartbeatLine = regexp.MustCompile(`\[([^\]]+)\]\s+(\S+)s  ▸`)

func TestHeartbeatsAreRateBounded(t *testing.T) {
	var events []event.Event
	events = append(events, event.Event{Kind: event.BuildStarted, Build: 0, Name: "a"})
	for at := time.Duration(0); at < 10*time.Second; at += 100 * time.Millisecond {
		events = append(events, event.Event{Kind: event.Heartbeat, At: at, Build: 0, Progress: &event.Progress{Elapsed: at, BudgetLeft: -1}})
	}
	var out bytes.Buffer
	if err := play(NewPlainView(&out, PlainOptions{}), events); err != nil {
		t.Fatal(err)
	}
	matches := heartbeatLine.FindAllStringSubmatch(out.String(), -1)
	// 100 heartbeats over 10 s: lines at least 0.9 s apart, so 10 to 12.
	if len(matches) < 10 || len(matches) > 12 {
		t.Fatalf("%d heartbeat lines for 10 s of heartbeats every 100 ms, want about 10:\n%s", len(matches), out.String())
	}
}

func TestPhaseLinesFollowDepth(t *testing.T) {
	events := runScript(reporttest.Sample(), false)
	for depth, want := range map[int]bool{2: false, 3: true} {
		var out bytes.Buffer
		if err := play(NewPlainView(&out, PlainOptions{Depth: depth}), events); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "┌ Timing tactics"); got != want {
			t.Errorf("Depth %d: depth-3 phase shown = %v, want %v", depth, got, want)
		}
	}
}

// hostileReport names builds and phases with workflow commands, fence
// markers and line breaks.
func hostileReport(f actions.Fence) *report.Report {
	r := reporttest.Parallel()
	names := []string{
		"::error::x\n::warning title=t::owned",
		"##[error]x\r::stop-commands::abc\n" + f.End() + "\n::notice::after-token",
	}
	for i := range r.Builds {
		b := &r.Builds[i]
		b.Name = names[i]
		b.Reason = "::error::reason\n##[warning]reason"
		b.Warnings = []string{"::error file=x::w\n##[group]g"}
		b.Phases[0].Name = "::endgroup::\n##[endgroup]"
	}
	return r
}

func hostileEvents(r *report.Report) []event.Event {
	events := runScript(r, true)
	for i := range events {
		e := &events[i]
		for j, p := range e.Path {
			e.Path[j] = p + "\n::error::phase " + p
		}
		if e.Progress != nil {
			e.Progress.BudgetName = "##[error]budget"
			e.Progress.Active[0].Name = "::error::active"
		}
		e.Message += "\n::set-output name=x::y"
	}
	return events
}

func TestViewsResistInjection(t *testing.T) {
	f := testFence(t)
	for _, jobs := range []int{1, 2} {
		var out bytes.Buffer
		r := hostileReport(f)
		if err := play(NewActionsView(&out, f, ActionsOptions{Jobs: jobs}), hostileEvents(r)); err != nil {
			t.Fatal(err)
		}
		assertInert(t, out.String(), f)
		if !strings.Contains(out.String(), "::error title=") {
			t.Errorf("jobs %d: no error annotation for the failed build", jobs)
		}

		var plain bytes.Buffer
		if err := play(NewPlainView(&plain, PlainOptions{}), hostileEvents(hostileReport(f))); err != nil {
			t.Fatal(err)
		}
		if cmds := actionstest.RunnerCommands(plain.String()); len(cmds) > 0 {
			t.Errorf("plain view output runs %q", cmds)
		}
	}
}

// ours matches the only commands the Actions view may issue.
var ours = regexp.MustCompile(`^::(group::[^\r\n]*|endgroup::|(error|warning|notice)( [^:]*)?::[^\r\n]*)$`)

// assertInert checks out as the runner would read it: outside the fence,
// only our own group, fence and annotation commands run, and "##[" never
// appears; groups never nest; the fence is closed at the end.
func assertInert(t *testing.T, out string, f actions.Fence) {
	t.Helper()
	depth := 0
	for _, cmd := range actionstest.RunnerCommands(out) {
		switch {
		case cmd == f.Start() || cmd == f.End():
		case strings.Contains(cmd, "##["):
			t.Errorf("runner would act on %q", cmd)
		case !ours.MatchString(cmd):
			t.Errorf("runner would run a command that is not ours: %q", cmd)
		case strings.HasPrefix(cmd, "::group::"):
			depth++
			if depth > 1 {
				t.Errorf("nested group %q", cmd)
			}
		case cmd == "::endgroup::":
			depth--
		}
	}
	if depth != 0 {
		t.Errorf("%d groups left open", depth)
	}
	// Every line that is not one of our commands lies inside a fence.
	fenced := false
	for _, l := range actions.SplitLines(strings.TrimSuffix(out, "\n")) {
		switch {
		case l == f.Start():
			fenced = true
		case l == f.End():
			fenced = false
		case !fenced && !ours.MatchString(l):
			t.Errorf("unfenced text line %q", l)
		}
	}
	if fenced {
		t.Error("output ends inside a fence")
	}
}

func TestAnnotationsAreCappedWorstFirst(t *testing.T) {
	r := reporttest.Sample()
	for i := range 8 {
		b := reporttest.OverBudgetBuild("extra", 0, 1000)
		b.Name += string(rune('a' + i))
		r.Builds = append(r.Builds, b)
	}
	var out bytes.Buffer
	v := NewActionsView(&out, testFence(t), ActionsOptions{Jobs: 1})
	v.Handle(event.Event{Kind: event.RunFinished, Build: -1, Run: r})
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n := strings.Count(got, "\n::error "); n != actions.DefaultPerLevel {
		t.Errorf("%d error annotations, want %d", n, actions.DefaultPerLevel)
	}
	if !strings.Contains(got, "::error title=trt-action%3A bert|large failed::") {
		t.Errorf("the failed build is not annotated first among errors:\n%s", got)
	}
	if !strings.Contains(got, "more annotations not shown") {
		t.Errorf("dropped annotations are not counted:\n%s", got)
	}
}

func FuzzActionsView(f *testing.F) {
	f.Add("::error::x", "##[error]y")
	f.Add("a\r::warning::b", "::stop-commands::zz\n::zz::\n::error::c")
	f.Add("\u00a0::notice::x", "  ::group::g")
	fence := testFence(f)
	f.Fuzz(func(t *testing.T, name, phase string) {
		r := reporttest.Parallel()
		r.Builds[0].Name, r.Builds[1].Name = name, phase
		r.Builds[1].Reason = phase
		r.Builds[0].Phases[0].Name = phase
		events := runScript(r, true)
		for i := range events {
			if len(events[i].Path) > 0 {
				events[i].Path = []string{name, phase}
			}
			events[i].Message = phase
		}
		// What a script build's command prints, and its TensorRT builds.
		at := events[len(events)/2].At
		events = slices.Insert(events, len(events)/2,
			event.Event{Kind: event.Output, At: at, Build: 0, Message: name + "\n" + phase},
			event.Event{Kind: event.InnerStarted, At: at, Build: 1, Inner: 1, Message: name},
			event.Event{Kind: event.InnerFinished, At: at, Build: 1, Inner: 1, InnerResult: &report.TensorRTBuild{Index: 1, Status: phase, Reason: name, Route: phase}})
		var out bytes.Buffer
		if err := play(NewActionsView(&out, fence, ActionsOptions{Jobs: 2}), events); err != nil {
			t.Fatal(err)
		}
		assertInert(t, out.String(), fence)
	})
}

func TestActionsViewAfterAnInterrupt(t *testing.T) {
	r := reporttest.Parallel()
	events := runScript(r, true)
	var cut []event.Event
	for _, ev := range events {
		if ev.At < 12*time.Second {
			cut = append(cut, ev)
		}
	}
	r.Complete, r.Interrupted = false, "SIGINT after 12s"
	r.Builds[0].Status, r.Builds[1].Status = report.StatusCancelled, report.StatusCancelled
	cut = append(cut, event.Event{Kind: event.RunFinished, At: 12 * time.Second, Build: -1, Run: r})
	for _, jobs := range []int{1, 2} {
		var out bytes.Buffer
		if err := play(NewActionsView(&out, testFence(t), ActionsOptions{Jobs: jobs}), cut); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		assertInert(t, got, testFence(t))
		if !strings.Contains(got, "⏹ interrupted (SIGINT after 12s)") {
			t.Errorf("jobs %d: no interrupt headline:\n%s", jobs, got)
		}
		if jobs > 1 && strings.Count(got, "did not finish") != 2 {
			t.Errorf("jobs %d: unfinished builds not written as groups:\n%s", jobs, got)
		}
		if !strings.Contains(got, "::warning title=trt-action%3A resnet-fp16 cancelled::") {
			t.Errorf("jobs %d: cancelled build not annotated as a warning", jobs)
		}
	}
}
