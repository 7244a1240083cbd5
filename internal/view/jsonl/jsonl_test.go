package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

const ms100 = 100 * time.Millisecond

func run() []event.Event {
	root := []string{"Building engine"}
	sub := []string{"Building engine", "Building engine from subgraph"}
	deep := []string{"Building engine", "Building engine from subgraph", "Optimizing graph"}
	evs := []event.Event{
		{Kind: event.RunStarted, Build: -1, Total: 2},
		{Kind: event.BuildStarted, At: 5 * time.Millisecond, Build: 0, Name: `mnist <fp16> "a&b"`},
		{Kind: event.PhaseStarted, At: 20 * time.Millisecond, Build: 0, Name: `mnist <fp16> "a&b"`, Path: root, Steps: 6},
		{Kind: event.PhaseStarted, At: 30 * time.Millisecond, Build: 0, Name: `mnist <fp16> "a&b"`, Path: sub, Steps: 1},
		{Kind: event.PhaseStarted, At: 40 * time.Millisecond, Build: 0, Name: `mnist <fp16> "a&b"`, Path: deep, Steps: 33},
	}
	// Heartbeats at 10/s for 2.5s: three lines come out (0.1s, 1.1s, 2.1s).
	for at := ms100; at <= 2500*time.Millisecond; at += ms100 {
		evs = append(evs, event.Event{Kind: event.Heartbeat, At: at, Build: 0, Name: `mnist <fp16> "a&b"`, Progress: &event.Progress{
			Elapsed: at, Callbacks: int64(at / time.Millisecond), Silent: 10 * time.Millisecond,
			BudgetLeft: 3*time.Second - at, BudgetName: "build",
			Active: []event.ActivePhase{{Name: "Building engine", Done: 1, Steps: 6, Elapsed: at}},
		}})
	}
	evs = append(evs,
		event.Event{Kind: event.BuildStarted, At: 2600 * time.Millisecond, Build: 1, Name: "resnet"},
		event.Event{Kind: event.Heartbeat, At: 2650 * time.Millisecond, Build: 1, Name: "resnet", Progress: &event.Progress{Elapsed: 50 * time.Millisecond, BudgetLeft: -1}},
		event.Event{Kind: event.BudgetWarning, At: 2700 * time.Millisecond, Build: 0, Name: `mnist <fp16> "a&b"`, Message: "build budget 80% used (2.4s of 3s)"},
		event.Event{Kind: event.PhaseFinished, At: 2800 * time.Millisecond, Build: 0, Name: `mnist <fp16> "a&b"`, Path: deep, Done: 28, Steps: 33, Elapsed: 2760 * time.Millisecond},
		event.Event{Kind: event.PhaseFinished, At: 2810 * time.Millisecond, Build: 0, Name: `mnist <fp16> "a&b"`, Path: sub, Done: 1, Steps: 1, Elapsed: 2780 * time.Millisecond},
		event.Event{Kind: event.Stopping, At: 2900 * time.Millisecond, Build: -1, Message: "SIGINT: stopping all builds"},
		event.Event{Kind: event.BuildFinished, At: 3000 * time.Millisecond, Build: 0, Name: `mnist <fp16> "a&b"`, Result: &report.Build{
			Name: `mnist <fp16> "a&b"`, Status: report.StatusOK, DurationMs: 2995,
			Engine: &report.Engine{Path: "out/mnist.engine", Bytes: 123456, SHA256: "ab12"},
		}},
		event.Event{Kind: event.BuildFinished, At: 3100 * time.Millisecond, Build: 1, Name: "resnet", Result: &report.Build{
			Name: "resnet", Status: report.StatusCancelled, Reason: "cancelled by SIGINT", DurationMs: 500,
		}},
		event.Event{Kind: event.RunFinished, At: 3200 * time.Millisecond, Build: -1, Run: &report.Report{
			DurationMs: 3200, Interrupted: "SIGINT after 2.9s", Builds: []report.Build{
				{Name: "mnist", Status: report.StatusOK}, {Name: "resnet", Status: report.StatusCancelled},
			}}},
	)
	return evs
}

func TestStreamGolden(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Depth: 2})
	for _, e := range run() {
		v.Handle(e)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "stream.jsonl", out.String())
}

// lines decodes the stream, checking every line is one JSON object with the
// version and a type.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line is not JSON: %q: %v", l, err)
		}
		if m["v"] != float64(version) || m["type"] == "" {
			t.Fatalf("line lacks v or type: %q", l)
		}
		got = append(got, m)
	}
	return got
}

func count(ls []map[string]any, typ string) int {
	n := 0
	for _, l := range ls {
		if l["type"] == typ {
			n++
		}
	}
	return n
}

func TestHeartbeatsAtMostOncePerSecondPerBuild(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{})
	for _, e := range run() {
		v.Handle(e)
	}
	ls := lines(t, out.String())
	// Build 0: 0.1s, 1.1s, 2.1s; build 1: its first heartbeat.
	if n := count(ls, "heartbeat"); n != 4 {
		t.Errorf("%d heartbeat lines, want 4", n)
	}
	for _, l := range ls {
		if l["type"] == "heartbeat" && l["name"] == "resnet" && l["budget_left_ms"] != nil {
			t.Errorf("no limit must be null, got %v", l["budget_left_ms"])
		}
	}
}

func TestDepthLimitsPhaseLines(t *testing.T) {
	for depth, want := range map[int]int{0: 5, 1: 1, 2: 3, 3: 5} {
		var out bytes.Buffer
		v := New(&out, Options{Depth: depth})
		for _, e := range run() {
			v.Handle(e)
		}
		ls := lines(t, out.String())
		if n := count(ls, "phase_started") + count(ls, "phase_finished"); n != want {
			t.Errorf("depth %d: %d phase lines, want %d", depth, n, want)
		}
	}
}

// A buffered file must not sit on lines: a tool tails it live.
func TestEveryLineIsFlushed(t *testing.T) {
	var file bytes.Buffer
	w := bufio.NewWriterSize(&file, 64<<10)
	v := New(w, Options{})
	for i, e := range run()[:3] {
		v.Handle(e)
		if got := strings.Count(file.String(), "\n"); got != i+1 {
			t.Fatalf("after %d events the file has %d lines", i+1, got)
		}
	}
}

type brokenPipe struct{ writes int }

func (b *brokenPipe) Write(p []byte) (int, error) {
	b.writes++
	return 0, os.ErrClosed
}

func TestWriteErrorStopsTheStream(t *testing.T) {
	w := &brokenPipe{}
	v := New(w, Options{})
	for _, e := range run() {
		v.Handle(e)
	}
	if err := v.Close(); err != os.ErrClosed {
		t.Errorf("Close() = %v, want the write error", err)
	}
	if w.writes != 1 {
		t.Errorf("%d writes after the first failed, want none", w.writes-1)
	}
}

// A hit's build_finished line says so: status cached, and what the cache
// did (without the original build's phase tree).
func TestBuildFinishedOfAHit(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{})
	hit := &report.Build{Name: "a", Status: report.StatusCached, DurationMs: 70, Cache: &report.CacheUse{
		Key: "k", Hit: true, BuiltAt: time.Date(2026, 11, 28, 10, 2, 0, 0, time.UTC), BuildMs: 843_000,
		Original: &report.Build{Name: "a", Status: report.StatusOK}}}
	v.Handle(event.Event{Kind: event.BuildFinished, Build: 0, Name: "a", Result: hit})
	got := strings.TrimSpace(out.String())
	want := `"status":"cached","duration_ms":70,"cache":{"key":"k","hit":true,"built_at":"2026-11-28T10:02:00Z","build_ms":843000}}`
	if !strings.HasSuffix(got, want) {
		t.Errorf("line %s\nwant it to end %s", got, want)
	}
}

// A --rebuild's build_finished line says it was rebuilt and replaced the
// entry. Before, only "replaced".
func TestBuildFinishedOfARebuild(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{})
	b := reporttest.Rebuilt().Builds[0]
	v.Handle(event.Event{Kind: event.BuildFinished, Build: 0, Name: b.Name, Result: &b})
	want := `"cache":{"key":"` + b.Cache.Key + `","hit":false,"stored":true,"rebuilt":true,"replaced":true}}`
	if got := strings.TrimSpace(out.String()); !strings.HasSuffix(got, want) {
		t.Errorf("line %s\nwant it to end %s", got, want)
	}
}
