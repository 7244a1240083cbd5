package build

import (
	"bufio"
	"encoding/json"
	"io"
	"time"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
	"github.com/trt-action/trt-action/native"
)

// The supervisor and a worker talk in JSON lines: the supervisor writes the
// worker's spec and later control messages to the worker's stdin; the worker
// writes messages to file descriptor 3, leaving its stdout and stderr to
// whatever the library prints.

// workerSpec is the first line a worker reads.
type workerSpec struct {
	Backend  string         `json:"backend"`
	Request  native.Request `json:"request"`
	SimTrace string         `json:"sim_trace,omitempty"` // trace file; "" = built-in
}

// Message kinds, worker to supervisor.
const (
	msgHello  = "hello"  // the worker is about to start the build; its clock starts now
	msgEvents = "ev"     // a batch of callbacks
	msgLogs   = "log"    // a batch of library log lines
	msgResult = "result" // the build ended
	msgStop   = "stop"   // supervisor to worker: soft stop
)

type message struct {
	M       string           `json:"m"`
	Events  []wireEvent      `json:"e,omitempty"`
	Logs    []report.LogLine `json:"l,omitempty"`
	Status  string           `json:"status,omitempty"` // ok, failed, cancelled, unavailable
	Error   string           `json:"error,omitempty"`
	Library string           `json:"library,omitempty"`
	Dropped int64            `json:"dropped,omitempty"`
}

// wireEvent is a trace.Event, short-named: a build sends thousands.
type wireEvent struct {
	T      int64      `json:"t"` // ns since the monitor started
	Thread int        `json:"th"`
	Kind   trace.Kind `json:"k"`
	Phase  string     `json:"p"`
	Parent string     `json:"pa,omitempty"`
	N      int        `json:"n,omitempty"`
}

func toWire(ev trace.Event) wireEvent {
	w := wireEvent{T: int64(ev.T), Thread: ev.Thread, Kind: ev.Kind, Phase: ev.Phase, Parent: ev.Parent}
	switch ev.Kind {
	case trace.Start:
		w.N = ev.Steps
	case trace.Step:
		w.N = ev.Step
	}
	return w
}

func (w wireEvent) event() trace.Event {
	ev := trace.Event{T: time.Duration(w.T), Thread: w.Thread, Kind: w.Kind, Phase: w.Phase, Parent: w.Parent}
	switch w.Kind {
	case trace.Start:
		ev.Steps = w.N
	case trace.Step:
		ev.Step = w.N
	}
	return ev
}

// readMessages decodes messages until r ends, then closes out. A line it
// cannot decode (a worker killed mid-write) is skipped, never the rest.
func readMessages(r io.Reader, out chan<- message) {
	defer close(out)
	in := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		var m message
		if len(line) > 0 && json.Unmarshal(line, &m) == nil {
			out <- m
		}
		if err != nil {
			return
		}
	}
}
