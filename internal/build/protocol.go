package build

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"slices"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
	"github.com/trt-action/trt-action/native"
)

// The supervisor writes the worker's spec and later control messages to
// the worker's stdin as JSON lines. The worker writes frames to file
// descriptor 3, leaving its stdout and stderr to whatever the library
// prints: a kind byte, the payload's length (uvarint), the payload. Events
// go as trace's compact wire batches, everything else as JSON.

const (
	frameEvents = 'e'
	frameJSON   = 'j'
)

// maxFrame bounds one frame; a batch of maxBatch events is far smaller, so
// a longer one means a corrupt stream.
const maxFrame = 16 << 20

// workerSpec is the first line a worker reads.
type workerSpec struct {
	Backend  string         `json:"backend"`
	Request  native.Request `json:"request"`
	SimTrace string         `json:"sim_trace,omitempty"` // trace file; "" = built-in
	// SimAllocate is host memory a simulated build touches while it runs
	// (sim.allocate), in bytes.
	SimAllocate int64 `json:"sim_allocate,omitempty"`
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
	Events  []trace.Event    `json:"-"` // msgEvents: sent as an event frame
	Logs    []report.LogLine `json:"l,omitempty"`
	Status  string           `json:"status,omitempty"` // msgResult: a native.Status's name (String)
	Error   string           `json:"error,omitempty"`
	Library string           `json:"library,omitempty"`
	Dropped int64            `json:"dropped,omitempty"`
}

// resultMessage is the message that ends a worker's build.
func resultMessage(status native.Status, err string) message {
	return message{M: msgResult, Status: status.String(), Error: err}
}

// status is a result message's status; a word no status has (a damaged
// message, or a backend's status this binary does not know) is a failure.
func (m *message) status() native.Status {
	if s, ok := native.ParseStatus(m.Status); ok {
		return s
	}
	return native.Failed
}

// protoWriter writes a worker's frames; flush sends them.
type protoWriter struct {
	w      *bufio.Writer
	events *trace.WireEncoder
	buf    []byte
}

func newProtoWriter(w io.Writer) *protoWriter {
	return &protoWriter{w: bufio.NewWriterSize(w, 64<<10), events: trace.NewWireEncoder()}
}

// send writes one message; events in batches of at most maxBatch.
func (p *protoWriter) send(m message) {
	if m.M == msgEvents {
		for batch := range slices.Chunk(m.Events, maxBatch) {
			p.buf = p.events.Append(p.buf[:0], batch)
			p.frame(frameEvents, p.buf)
		}
		return
	}
	data, _ := json.Marshal(m) // plain strings and numbers always marshal
	p.frame(frameJSON, data)
}

func (p *protoWriter) frame(kind byte, payload []byte) {
	_ = p.w.WriteByte(kind)
	var n [binary.MaxVarintLen64]byte
	_, _ = p.w.Write(n[:binary.PutUvarint(n[:], uint64(len(payload)))])
	_, _ = p.w.Write(payload)
}

func (p *protoWriter) flush() { _ = p.w.Flush() }

// readMessages decodes frames until r ends, then closes out. It stops at a
// frame it cannot read whole (a worker killed mid-write); a frame that does
// not decode is skipped.
func readMessages(r io.Reader, out chan<- message) {
	defer close(out)
	in := bufio.NewReaderSize(r, 64<<10)
	events := trace.NewWireDecoder()
	var payload []byte
	for {
		kind, err := in.ReadByte()
		if err != nil {
			return
		}
		n, err := binary.ReadUvarint(in)
		if err != nil || n > maxFrame {
			return
		}
		if uint64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(in, payload); err != nil {
			return
		}
		switch kind {
		case frameEvents:
			evs, err := events.Decode(nil, payload)
			if len(evs) > 0 {
				out <- message{M: msgEvents, Events: evs}
			}
			_ = err // the events before the damage are kept
		case frameJSON:
			var m message
			if json.Unmarshal(payload, &m) == nil {
				out <- m
			}
		}
	}
}
