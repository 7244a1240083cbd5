//go:build cgo

package native

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/trace"
)

// traceFile writes evs as a trace file and returns its path.
func traceFile(t *testing.T, evs []trace.Event) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := trace.NewWriter(f)
	for _, ev := range evs {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// fileRequest is simRequest for a trace read from a file as it plays.
func fileRequest(t *testing.T, path string, sim SimRequest) Request {
	sim.TraceFile = path
	return Request{Name: "mnist-fp16", EngineTmp: filepath.Join(t.TempDir(), "engine.tmp"), Sim: &sim}
}

// A trace file plays as the same trace in memory does: every event in
// order, repeated by reading the file again, and the same engine.
func TestSimTraceFilePlaysAsTheTraceInMemory(t *testing.T) {
	one := trace.Default()
	const repeat = 3
	file := fileRequest(t, traceFile(t, one), SimRequest{Unpaced: true, Repeat: repeat, Threads: 4})
	b, err := StartSim(file)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	events, logs, res := runToEnd(t, b, 60*time.Second)
	if res.Status != OK || len(events) != repeat*len(one) {
		t.Fatalf("result %+v after %d events, want ok after %d", res, len(events), repeat*len(one))
	}
	for i, ev := range stripTiming(events) {
		if want := stripTiming(one[i%len(one) : i%len(one)+1])[0]; ev != want {
			t.Fatalf("event %d = %+v, want %+v", i, ev, want)
		}
	}
	if len(logs) == 0 || logs[0].Text != "simulating the trace as it is read, on 4 threads" {
		t.Errorf("logs = %+v", logs)
	}

	memory := simRequest(t, one, SimRequest{Unpaced: true, Repeat: repeat, Threads: 4})
	m, err := StartSim(memory)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, _, res := runToEnd(t, m, 60*time.Second); res.Status != OK {
		t.Fatalf("in memory: %+v", res)
	}
	fromFile, _ := os.ReadFile(file.EngineTmp)
	fromMemory, _ := os.ReadFile(memory.EngineTmp)
	if len(fromFile) == 0 || string(fromFile) != string(fromMemory) {
		t.Errorf("engines differ:\nfile   %q\nmemory %q", fromFile, fromMemory)
	}
}

// A bad line part way through a trace file fails the build there, naming
// the file and line, with every started phase finished.
func TestSimTraceFileBadLineFailsTheBuildNamingIt(t *testing.T) {
	path := traceFile(t, longTrace(3000))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[2500] = `{"t_ms":0,"thread":1,"ev":"stop","phase":"Tactic timing"}` + "\n"
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := StartSim(fileRequest(t, path, SimRequest{Unpaced: true, Threads: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	events, _, res := runToEnd(t, b, 10*time.Second)
	want := path + `:2501: unknown ev "stop" (allowed: start, step, finish)`
	if res.Status != Failed || res.Err != want {
		t.Fatalf("result %+v, want failed with %q", res, want)
	}
	if len(events) != 2500+2 {
		t.Errorf("%d events, want the 2500 before the bad line and two finishes", len(events))
	}
	checkBalanced(t, events)
}

// A trace file that is not there fails before the build starts.
func TestSimTraceFileMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.jsonl")
	if _, err := StartSim(fileRequest(t, missing, SimRequest{Threads: 1})); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("error %v, want one naming %s", err, missing)
	}
}
