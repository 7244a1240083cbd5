package trace

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func writeAll(t testing.TB, events []Event) string {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, ev := range events {
		if err := w.Write(ev); err != nil {
			t.Fatalf("Write(%+v): %v", ev, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestWriterFormat(t *testing.T) {
	events := []Event{
		{T: 12 * time.Millisecond, Thread: 1, Kind: Start, Phase: "Building engine", Steps: 6},
		{T: 13 * time.Millisecond, Thread: 1, Kind: Step, Phase: "Building engine", Step: 0},
		{T: 13500 * time.Microsecond, Thread: 2, Kind: Start, Phase: `Timing <a> & "b"`, Parent: "Building engine", Steps: 2},
		{T: 13501234 * time.Nanosecond, Thread: 2, Kind: Finish, Phase: `Timing <a> & "b"`},
		{T: 40 * time.Millisecond, Thread: 1, Kind: Finish, Phase: "Building engine"},
	}
	want := `{"t_ms":12,"thread":1,"ev":"start","phase":"Building engine","parent":null,"steps":6}
{"t_ms":13,"thread":1,"ev":"step","phase":"Building engine","step":0}
{"t_ms":13.5,"thread":2,"ev":"start","phase":"Timing <a> & \"b\"","parent":"Building engine","steps":2}
{"t_ms":13.501,"thread":2,"ev":"finish","phase":"Timing <a> & \"b\""}
{"t_ms":40,"thread":1,"ev":"finish","phase":"Building engine"}
`
	if got := writeAll(t, events); got != want {
		t.Errorf("written:\n%s\nwant:\n%s", got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	events := []Event{
		{T: 0, Thread: 0, Kind: Start, Phase: "root", Steps: 1},
		{T: 1500 * time.Microsecond, Thread: 3, Kind: Start, Phase: "ünïcode\nname\t\"q\"", Parent: "root", Steps: 2147483647},
		{T: 1500 * time.Microsecond, Thread: 3, Kind: Step, Phase: "ünïcode\nname\t\"q\"", Step: 2147483646},
		{T: 2 * time.Hour, Thread: 3, Kind: Finish, Phase: "ünïcode\nname\t\"q\"", Step: 0},
		{T: 2*time.Hour + time.Microsecond, Thread: 1, Kind: Finish, Phase: "root"},
	}
	got, err := Read(strings.NewReader(writeAll(t, events)), "rt.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(events) {
		t.Fatalf("read %d events, wrote %d", len(got), len(events))
	}
	for i := range events {
		if got[i] != events[i] {
			t.Errorf("event %d: read %+v, wrote %+v", i+1, got[i], events[i])
		}
	}
}

func TestReadAcceptsNumberForms(t *testing.T) {
	in := `{"t_ms":0.0004,"ev":"start","phase":"a","steps":2.0}
{"ev":"step","phase":"a","step":1e0,"t_ms":1.2345}
{"t_ms":1.2346,"thread":7,"ev":"finish","phase":"a"}
`
	got, err := Read(strings.NewReader(in), "n.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{T: 0, Kind: Start, Phase: "a", Steps: 2},                     // parent omitted = null; below 1 µs rounds to 0
		{T: 1235 * time.Microsecond, Kind: Step, Phase: "a", Step: 1}, // field order is free on input
		{T: 1235 * time.Microsecond, Thread: 7, Kind: Finish, Phase: "a"},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: got %+v, want %+v", i+1, got[i], want[i])
		}
	}
}

func TestReadErrors(t *testing.T) {
	const ok = `{"t_ms":5,"thread":1,"ev":"start","phase":"a","parent":null,"steps":2}` + "\n"
	tests := []struct {
		name, in, want string
	}{
		{"syntax", `{"t_ms":1,}`, `t.jsonl:1:11: invalid JSON: invalid character '}' looking for beginning of object key string`},
		{"trailing", `{"t_ms":1} {}`, `t.jsonl:1:12: invalid JSON: invalid character '{' after top-level value`},
		{"array", `[1]`, `t.jsonl:1: each line must be a JSON object`},
		{"null", `null`, `t.jsonl:1: each line must be a JSON object`},
		{"blank", ok + "\n" + ok, `t.jsonl:2: blank line (want one JSON event per line)`},
		{"unknown field", `{"t_ms":1,"ev":"start","phase":"a","setps":2}`, `t.jsonl:1: unknown field "setps" (allowed: t_ms, thread, ev, phase, parent, steps, step)`},
		{"missing t_ms", `{"ev":"finish","phase":"a"}`, `t.jsonl:1: missing t_ms (milliseconds since the build started)`},
		{"negative t_ms", `{"t_ms":-1,"ev":"finish","phase":"a"}`, `t.jsonl:1: t_ms must be a non-negative number of milliseconds, got -1`},
		{"quoted t_ms", `{"t_ms":"1","ev":"finish","phase":"a"}`, `t.jsonl:1: t_ms must be a non-negative number of milliseconds, got "1"`},
		{"huge t_ms", `{"t_ms":1e13,"ev":"finish","phase":"a"}`, `t.jsonl:1: t_ms must be at most 1000000000000 milliseconds, got 1e13`},
		{"backwards", ok + `{"t_ms":4.5,"ev":"finish","phase":"a"}`, `t.jsonl:2: t_ms 4.5 is before the previous event's 5 (events must be in time order)`},
		{"thread", `{"t_ms":1,"thread":-2,"ev":"finish","phase":"a"}`, `t.jsonl:1: thread must be an integer from 0 to 2147483647, got -2`},
		{"missing ev", `{"t_ms":1,"phase":"a"}`, `t.jsonl:1: missing ev (allowed: start, step, finish)`},
		{"unknown ev", `{"t_ms":1,"ev":"begin","phase":"a"}`, `t.jsonl:1: unknown ev "begin" (allowed: start, step, finish)`},
		{"missing phase", `{"t_ms":1,"ev":"finish"}`, `t.jsonl:1: missing phase (a non-empty phase name)`},
		{"empty phase", `{"t_ms":1,"ev":"finish","phase":""}`, `t.jsonl:1: missing phase (a non-empty phase name)`},
		{"missing steps", `{"t_ms":1,"ev":"start","phase":"a","parent":null}`, `t.jsonl:1: start needs steps (nbSteps > 0)`},
		{"zero steps", `{"t_ms":1,"ev":"start","phase":"a","steps":0}`, `t.jsonl:1: start needs steps > 0 (nbSteps, a 32-bit integer), got 0`},
		{"fractional steps", `{"t_ms":1,"ev":"start","phase":"a","steps":1.5}`, `t.jsonl:1: start needs steps > 0 (nbSteps, a 32-bit integer), got 1.5`},
		{"parent type", `{"t_ms":1,"ev":"start","phase":"a","parent":3,"steps":1}`, `t.jsonl:1: parent must be a string or null, got 3`},
		{"missing step", `{"t_ms":1,"ev":"step","phase":"a"}`, `t.jsonl:1: step event needs step (the step just completed, >= 0)`},
		{"negative step", `{"t_ms":1,"ev":"step","phase":"a","step":-1}`, `t.jsonl:1: step must be >= 0 (a 32-bit integer), got -1`},
		{"steps on step", `{"t_ms":1,"ev":"step","phase":"a","step":1,"steps":3}`, `t.jsonl:1: steps is only allowed on start events, not on step`},
		{"step on finish", `{"t_ms":1,"ev":"finish","phase":"a","step":1}`, `t.jsonl:1: step is only allowed on step events, not on finish`},
		{"parent on finish", `{"t_ms":1,"ev":"finish","phase":"a","parent":null}`, `t.jsonl:1: parent is only allowed on start events, not on finish`},
		{"too long", strings.Repeat(" ", maxLine+1), `t.jsonl:1: line longer than 1048576 bytes (one JSON event per line)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in), "t.jsonl")
			if err == nil || err.Error() != tt.want {
				t.Errorf("Read error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestWriterRejects(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"unknown kind", Event{Kind: "begin", Phase: "a"}, `trace: cannot write event: unknown ev "begin" (allowed: start, step, finish)`},
		{"no phase", Event{Kind: Finish}, `trace: cannot write event: missing phase (a non-empty phase name)`},
		{"no steps", Event{Kind: Start, Phase: "a"}, `trace: cannot write event: start needs steps > 0 (nbSteps, a 32-bit integer), got 0`},
		{"negative step", Event{Kind: Step, Phase: "a", Step: -1}, `trace: cannot write event: step must be >= 0 (a 32-bit integer), got -1`},
		{"negative time", Event{T: -time.Millisecond, Kind: Finish, Phase: "a"}, `trace: cannot write event: t_ms must be a non-negative number of milliseconds, got -1`},
		{"negative thread", Event{Thread: -1, Kind: Finish, Phase: "a"}, `trace: cannot write event: thread must be an integer from 0 to 2147483647, got -1`},
		{"huge thread", Event{Thread: 1 << 31, Kind: Finish, Phase: "a"}, `trace: cannot write event: thread must be an integer from 0 to 2147483647, got 2147483648`},
		{"huge time", Event{T: 1e12*time.Millisecond + time.Microsecond, Kind: Finish, Phase: "a"}, `trace: cannot write event: t_ms must be at most 1000000000000 milliseconds, got 1000000000000.001`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := NewWriter(new(bytes.Buffer)).Write(tt.ev)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Write error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestWriterRejectsTimeGoingBack(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write(Event{T: 2 * time.Millisecond, Kind: Finish, Phase: "a"}); err != nil {
		t.Fatal(err)
	}
	err := w.Write(Event{T: time.Millisecond, Kind: Finish, Phase: "a"})
	want := "trace: cannot write event: t_ms 1 is before the previous event's 2 (events must be in time order)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Errorf("wrote %d lines, want only the accepted event", n)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestFlushReportsWriteErrors(t *testing.T) {
	w := NewWriter(failWriter{})
	if err := w.Write(Event{Kind: Finish, Phase: "a"}); err != nil {
		t.Fatal(err) // buffered: the error shows at Flush
	}
	if err := w.Flush(); err == nil || err.Error() != "disk full" {
		t.Errorf("Flush error = %v, want disk full", err)
	}
}

func TestFormatMillis(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{time.Millisecond, "1"},
		{1100 * time.Microsecond, "1.1"},
		{1010 * time.Microsecond, "1.01"},
		{1001 * time.Microsecond, "1.001"},
		{1000499 * time.Nanosecond, "1"},
		{1000500 * time.Nanosecond, "1.001"},
		{999 * time.Microsecond, "0.999"},
		{90 * time.Second, "90000"},
	}
	for _, tt := range tests {
		if got := formatMillis(tt.d); got != tt.want {
			t.Errorf("formatMillis(%v) = %s, want %s", tt.d, got, tt.want)
		}
	}
}
