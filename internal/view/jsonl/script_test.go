package jsonl

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// scriptRun is a script build as the supervisor tells it: its output, a
// TensorRT build's start, phases and heartbeat (which say which TensorRT
// build they are of), its end, and the build's end.
func scriptRun() []event.Event {
	b := reporttest.YoloExport(0)
	at := func(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
	ev := func(kind event.EventKind, ms int64, inner int) event.Event {
		return event.Event{Kind: kind, At: at(ms), Build: 0, Name: b.Name, Inner: inner}
	}
	out := ev(event.Output, 100, 0)
	out.Message = `Ultralytics 8.3.40 "quoted" <tag> & ##[error]`
	started := ev(event.InnerStarted, 2000, 1)
	started.Message = "pid 4711 · build_serialized_network · python route"
	phase := ev(event.PhaseStarted, 2100, 1)
	phase.Path, phase.Steps = []string{"Building engine"}, 6
	beat := ev(event.Heartbeat, 2500, 0)
	beat.Progress = &event.Progress{Elapsed: at(2500), BudgetLeft: -1, Callbacks: 40,
		Active: []event.ActivePhase{{Name: "Building engine", Done: 1, Steps: 6, Elapsed: at(400)}}, Inner: 1, InnerRunning: 1}
	done := ev(event.PhaseFinished, 19_900, 1)
	done.Path, done.Done, done.Steps, done.Elapsed = []string{"Building engine"}, 6, 6, at(17_800)
	finished := ev(event.InnerFinished, 20_000, 1)
	finished.InnerResult = &b.TensorRTBuilds[0]
	between := ev(event.Heartbeat, 21_000, 0)
	between.Progress = &event.Progress{Elapsed: at(21_000), BudgetLeft: -1, Active: []event.ActivePhase{}, InnerDone: 1}
	end := ev(event.BuildFinished, 42_000, 0)
	b.Engines = []report.Engine{{Path: "out/yolo11n.engine", Bytes: 12_345_678, SHA256: "ab12"}}
	end.Result = &b
	return []event.Event{{Kind: event.RunStarted, Build: -1, Total: 1}, ev(event.BuildStarted, 0, 0), out, started, phase, beat, done, finished, between, end}
}

func TestScriptStreamGolden(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Depth: 2})
	for _, e := range scriptRun() {
		v.Handle(e)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "stream-script.jsonl", out.String())
	ls := lines(t, out.String())
	for typ, want := range map[string]int{"output": 1, "tensorrt_build_started": 1, "tensorrt_build_finished": 1} {
		if n := count(ls, typ); n != want {
			t.Errorf("%d %s lines, want %d", n, typ, want)
		}
	}
	for _, l := range ls {
		switch l["type"] {
		case "phase_started", "phase_finished":
			if l["tensorrt_build"] != float64(1) {
				t.Errorf("a TensorRT build's phase line does not say which: %v", l)
			}
		case "build_finished":
			sc, _ := l["script"].(map[string]any)
			if sc["exit_code"] != float64(1) || sc["tensorrt_builds"] != float64(2) || sc["output_lines"] != float64(1) || sc["exit"] != "exit status 1" {
				t.Errorf("build_finished's script = %v", sc)
			}
			if es, _ := l["engines"].([]any); len(es) != 1 {
				t.Errorf("build_finished's engines = %v", l["engines"])
			}
		}
	}
}

// An ONNX build's lines are as they were: no TensorRT build fields.
func TestOnnxBuildLinesHaveNoScriptFields(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{})
	for _, e := range run() {
		v.Handle(e)
	}
	if got := out.String(); strings.Contains(got, "tensorrt_build") || strings.Contains(got, `"script"`) || strings.Contains(got, `"engines"`) {
		t.Errorf("an ONNX build's lines hold script fields:\n%s", got)
	}
}

// With --events - the stream is the log: a command that prints far more
// than a log should hold gets its first lines as output lines, each cut;
// build_finished counts them all.
func TestScriptOutputLinesAreBounded(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{})
	b := reporttest.UnobservedScript(0)
	printed := report.LiveOutputLines + 700
	for i := range printed {
		v.Handle(event.Event{Kind: event.Output, Build: 0, Name: b.Name, Message: fmt.Sprint(i, strings.Repeat("x", 3*report.OutputLineRunes))})
	}
	v.Handle(event.Event{Kind: event.BuildFinished, Build: 0, Name: b.Name, Result: &b})
	ls := lines(t, out.String())
	if n := count(ls, "output"); n != report.LiveOutputLines {
		t.Errorf("%d output lines, want the first %d", n, report.LiveOutputLines)
	}
	for _, l := range ls {
		if line, ok := l["line"].(string); ok && len([]rune(line)) > report.OutputLineRunes {
			t.Fatalf("an output line of %d runes", len([]rune(line)))
		}
	}
	if sc := ls[len(ls)-1]["script"].(map[string]any); sc["output_lines"] != float64(printed) {
		t.Errorf("output_lines = %v, want %d", sc["output_lines"], printed)
	}
}
