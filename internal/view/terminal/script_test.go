package terminal

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

func innerStarted(at time.Duration, i, k int, msg string) event.Event {
	return event.Event{Kind: event.InnerStarted, At: at, Build: i, Inner: k, Message: msg}
}

func innerPhase(kind event.EventKind, at time.Duration, i, k int, steps int, path ...string) event.Event {
	return event.Event{Kind: kind, At: at, Build: i, Inner: k, Path: path, Steps: steps}
}

// scriptBeat is a heartbeat of a script build running TensorRT build k,
// running of them at once and done ended.
func scriptBeat(at time.Duration, i int, elapsed time.Duration, k, running, done int, chain ...event.ActivePhase) event.Event {
	e := beat(at, i, elapsed, 3*time.Minute-elapsed, "build", chain...)
	e.Progress.Inner, e.Progress.InnerRunning, e.Progress.InnerDone = k, running, done
	return e
}

// scriptState: an export script in its second TensorRT build, a
// TensorRT-LLM build running two at once, and a script between builds,
// beside an ONNX build.
func scriptState() runState {
	var st runState
	for _, e := range []event.Event{
		{Kind: event.RunStarted, Total: 4},
		started(0, 0, "resnet50-fp16"),
		started(0, 1, "yolo-export"),
		started(0, 2, "trtllm-build"),
		started(0, 3, "polygraphy-convert"),
		beat(40*s, 0, 40*s, -1, "", ph("Building engine", 3, 6, 39*s), ph("Optimizing graph", 14, 33, 9*s)),
		{Kind: event.Output, At: s, Build: 3, Name: "polygraphy-convert", Message: "[I] Loading model"},
		scriptBeat(40*s, 1, 40*s, 2, 1, 1, ph("Building engine", 2, 6, 15*s), ph("Computing profile costs", 4, 10, 9*s), ph("Timing tactics", 1, 3, 4*s)),
		scriptBeat(40*s, 2, 40*s, 3, 2, 1, ph("Building engine", 1, 6, 20*s)),
		scriptBeat(40*s, 3, 40*s, 0, 0, 1),
	} {
		st.apply(e)
	}
	st.Now = 40*s + 300*time.Millisecond
	return st
}

func TestRenderScriptGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		width int
		color bool
	}{{"script", 100, false}, {"script_color", 100, true}, {"script_60", 60, false}} {
		t.Run(tc.name, func(t *testing.T) {
			lines := renderState(scriptState(), tc.width, tc.color)
			assertFits(t, lines, tc.width)
			checkGolden(t, "render_"+tc.name, frame(lines))
		})
	}
	got := frame(renderState(scriptState(), 100, false))
	for _, want := range []string{
		"▶ yolo-export 40.3s · TensorRT build 2 of 2 so far · 2m20s left (build)",
		"▶ trtllm-build 40.3s · TensorRT build 3 of 3 so far, 2 running",
		"▶ polygraphy-convert 40.3s · running the command, 1 TensorRT build done",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("frame lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ETA ~") && strings.Contains(got, "yolo-export 40.3s · TensorRT build 2 of 2 so far · 2m20s left (build) · ETA") {
		t.Error("a script build's ETA came from one TensorRT build's phases")
	}
}

// Between heartbeats, a TensorRT build's start replaces the bars; phase
// events of a build not shown leave them alone; its end takes them off.
func TestInnerBuildEventsBetweenHeartbeats(t *testing.T) {
	var st runState
	for _, e := range []event.Event{
		started(0, 0, "export"),
		innerStarted(s, 0, 1, "pid 1 · build_serialized_network · python route"),
		innerPhase(event.PhaseStarted, s, 0, 1, 6, "Building engine"),
		innerStarted(2*s, 0, 2, "pid 2 · build_serialized_network · python route"),
		innerPhase(event.PhaseStarted, 2*s, 0, 2, 6, "Building engine"),
		innerPhase(event.PhaseStarted, 2*s, 0, 1, 33, "Building engine", "Optimizing graph"),
	} {
		st.apply(e)
	}
	b := &st.Builds[0]
	if b.Beat.Inner != 2 || b.Beat.InnerRunning != 2 || len(b.Beat.Active) != 1 || b.Beat.Active[0].Steps != 6 {
		t.Fatalf("after two starts: inner %d, running %d, chain %+v; want build 2's root phase only", b.Beat.Inner, b.Beat.InnerRunning, b.Beat.Active)
	}
	st.apply(event.Event{Kind: event.InnerFinished, At: 3 * s, Build: 0, Inner: 1, InnerResult: &report.TensorRTBuild{Index: 1, Status: report.StatusOK}})
	if b.Beat.Inner != 2 || b.Beat.InnerDone != 1 || b.Beat.InnerRunning != 1 || len(b.Beat.Active) != 1 {
		t.Errorf("the end of a build not shown changed the bars: %+v", b.Beat)
	}
	st.apply(event.Event{Kind: event.InnerFinished, At: 4 * s, Build: 0, Inner: 2, InnerResult: &report.TensorRTBuild{Index: 2, Status: report.StatusOK}})
	if b.Beat.Inner != 0 || len(b.Beat.Active) != 0 || b.Beat.InnerDone != 2 {
		t.Errorf("the end of the build shown left its bars: %+v", b.Beat)
	}
	if inner, more := innerText(b); inner+more != "running the command, 2 TensorRT builds done" {
		t.Errorf("between builds: %q", inner+more)
	}
}

// A run of script builds as the terminal shows it: the command's output
// and each TensorRT build's end above the live area, where they stay, the
// bars of the TensorRT build running, and the final table.
func TestViewOfScriptBuildsGolden(t *testing.T) {
	r := reporttest.Scripts()
	yolo := r.Builds[1]
	evs := []event.Event{{Kind: event.RunStarted, Total: 1}, started(0, 1, yolo.Name)}
	out := func(at time.Duration, line string) event.Event {
		return event.Event{Kind: event.Output, At: at, Build: 1, Name: yolo.Name, Message: line}
	}
	evs = append(evs, out(100*time.Millisecond, yolo.Script.OutputTail[0]), innerStarted(200*time.Millisecond, 1, 1, "pid 4711"),
		innerPhase(event.PhaseStarted, 210*time.Millisecond, 1, 1, 6, "Building engine"),
		scriptBeat(300*time.Millisecond, 1, 300*time.Millisecond, 1, 1, 0, ph("Building engine", 1, 6, 90*time.Millisecond)),
		out(350*time.Millisecond, "\x1b[31mTensorRT:\x1b[0m building\r FP16 engine"),
		event.Event{Kind: event.InnerFinished, At: 400 * time.Millisecond, Build: 1, Inner: 1, InnerResult: &yolo.TensorRTBuilds[0]},
		innerStarted(500*time.Millisecond, 1, 2, "pid 4711"),
		innerPhase(event.PhaseStarted, 510*time.Millisecond, 1, 2, 6, "Building engine"),
		event.Event{Kind: event.InnerFinished, At: 700 * time.Millisecond, Build: 1, Inner: 2, InnerResult: &yolo.TensorRTBuilds[1]},
		out(750*time.Millisecond, yolo.Script.OutputTail[9]),
		finished(800*time.Millisecond, 1, yolo.Name, yolo.Status, 800*time.Millisecond, yolo.Reason),
		event.Event{Kind: event.RunFinished, At: 900 * time.Millisecond, Run: r},
	)
	var buf bytes.Buffer
	v := New(&buf, Options{Width: func() int { return 100 }, Height: func() int { return 30 }})
	for _, e := range evs {
		v.Handle(e)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	checkGolden(t, "view_script", got)
	for _, want := range []string{
		"yolo-export │ Ultralytics 8.3.40",
		"✔ yolo-export: TensorRT build 1: ok in 18.0s · 12.3 MB · python route · pid 4711\n",
		"✖ yolo-export: TensorRT build 2: budget-exceeded after 15.0s",
		"· TensorRT build 1 of 1 so far",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, visible(got))
		}
	}
	if strings.Contains(got, "\x1b[31m") || strings.Contains(got, "\rFP16") {
		t.Error("the command's output moved the cursor or coloured the screen")
	}
}

// A command that prints far more than a screen can take shows its first
// lines, a note, and when it ends the last lines.
func TestScriptOutputOnTheTerminalIsBounded(t *testing.T) {
	b := reporttest.UnobservedScript(0)
	printed := report.LiveOutputLines + 300
	b.Script.OutputTail = []string{"second to last", "last"}
	var buf bytes.Buffer
	v := New(&buf, Options{Width: func() int { return 80 }})
	v.Handle(started(0, 0, b.Name))
	for i := range printed {
		v.Handle(event.Event{Kind: event.Output, At: time.Duration(i) * time.Millisecond, Name: b.Name, Message: fmt.Sprint("line ", i)})
	}
	v.Handle(event.Event{Kind: event.BuildFinished, At: time.Second * 2, Name: b.Name, Result: &b})
	v.Handle(event.Event{Kind: event.RunFinished, At: time.Second * 2, Run: &report.Report{Builds: []report.Build{b}}})
	got := buf.String()
	if n := strings.Count(got, "│ line "); n != report.LiveOutputLines {
		t.Errorf("%d output lines shown as they came, want %d", n, report.LiveOutputLines)
	}
	for _, want := range []string{"│ … more output than the 1000 lines", "│ … 298 lines of output not shown; the last 2:", "│ second to last\n", "│ last\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
}

func TestScriptFramesFitEveryWidth(t *testing.T) {
	run := reporttest.Scripts()
	for w := 10; w <= 130; w++ {
		assertFits(t, renderState(scriptState(), w, true), w)
		assertFits(t, renderFinal(run, w, true), w)
	}
}
