package build

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
	"github.com/trt-action/trt-action/native"
)

// TestWorkerStatusesCrossTheProtocol: every status a backend returns
// reaches the supervisor as itself, by the one map of names
// (native.Status's).
func TestWorkerStatusesCrossTheProtocol(t *testing.T) {
	for _, s := range []native.Status{native.OK, native.Failed, native.Cancelled, native.Unavailable} {
		var buf bytes.Buffer
		p := newProtoWriter(&buf)
		p.send(resultMessage(s, ""))
		p.flush()
		got := readAll(buf.Bytes())
		if len(got) != 1 || got[0].status() != s || got[0].Status != s.String() {
			t.Errorf("%v crossed as %+v", s, got)
		}
	}
}

// Every message kind crosses the frames intact; events are exactly what
// was sent (the recorder writes what crossed); a stream cut inside a frame
// (a worker killed mid-write) ends the messages there.
func TestProtocolFramesRoundTrip(t *testing.T) {
	events := trace.Default() // 6,439: two batches
	for i := range events {
		events[i].T, events[i].Thread = time.Duration(i)*time.Microsecond, 1+i%4
	}
	var buf bytes.Buffer
	p := newProtoWriter(&buf)
	p.send(message{M: msgHello, Library: "TensorRT-RTX 1.7"})
	p.send(message{M: msgEvents, Events: events})
	p.send(message{M: msgLogs, Logs: []report.LogLine{{Severity: report.SeverityWarning, Text: "x"}}})
	p.send(resultMessage(native.Unavailable, "no library"))
	p.flush()

	got := readAll(buf.Bytes())
	var kinds []string
	var evs []trace.Event
	for _, m := range got {
		kinds = append(kinds, m.M)
		evs = append(evs, m.Events...)
	}
	if want := []string{msgHello, msgEvents, msgEvents, msgLogs, msgResult}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("messages %v, want %v (events in batches of %d)", kinds, want, maxBatch)
	}
	if !reflect.DeepEqual(evs, events) {
		t.Error("events changed on the way")
	}
	if got[0].Library != "TensorRT-RTX 1.7" || got[3].Logs[0].Text != "x" || got[4].status() != native.Unavailable || got[4].Error != "no library" {
		t.Errorf("fields lost: %+v", got)
	}
	cut := readAll(buf.Bytes()[:buf.Len()-3])
	if len(cut) != 4 {
		t.Errorf("a stream cut in its last frame gave %d messages, want the 4 before it", len(cut))
	}
}

func readAll(data []byte) []message {
	out := make(chan message, 16)
	go readMessages(bytes.NewReader(data), out)
	var got []message
	for m := range out {
		got = append(got, m)
	}
	return got
}

// frames builds a stream of raw frames: kind byte, uvarint length, payload.
func frames(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func rawFrame(kind byte, payload string) []byte {
	return append(binary.AppendUvarint([]byte{kind}, uint64(len(payload))), payload...)
}

// A torn frame (a worker killed mid-write) ends the stream after the
// messages before it, wherever the tear is: in the length, in the payload.
func TestProtocolTornFrames(t *testing.T) {
	hello := rawFrame(frameJSON, `{"m":"hello","library":"L"}`)
	result := rawFrame(frameJSON, `{"m":"result","status":"ok"}`)
	whole := frames(hello, result)
	for cut := len(hello); cut < len(whole); cut++ {
		got := readAll(whole[:cut])
		if len(got) != 1 || got[0].M != msgHello || got[0].Library != "L" {
			t.Fatalf("stream cut at byte %d of %d: %+v, want only the hello", cut, len(whole), got)
		}
	}
	// A length whose varint never ends is as torn as a short payload.
	endless := frames(hello, []byte{frameJSON, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	if got := readAll(endless); len(got) != 1 {
		t.Errorf("an overlong varint gave %d messages, want the hello", len(got))
	}
}

// A length beyond maxFrame is a corrupt stream: reading stops there, even
// when that many bytes follow, and the frames after it are not read.
func TestProtocolOversizedFrame(t *testing.T) {
	hello := rawFrame(frameJSON, `{"m":"hello"}`)
	huge := append(binary.AppendUvarint([]byte{frameJSON}, maxFrame+1), make([]byte, maxFrame+1)...)
	after := rawFrame(frameJSON, `{"m":"result","status":"ok"}`)
	got := readAll(frames(hello, huge, after))
	if len(got) != 1 || got[0].M != msgHello {
		t.Errorf("after an oversized frame: %+v, want only the hello", got)
	}
	// maxFrame itself is allowed: a frame of exactly that size still reads.
	payload := `{"m":"log","l":[{"severity":"info","text":"` + strings.Repeat("x", maxFrame-100) + `"}]}`
	padded := payload + strings.Repeat(" ", maxFrame-len(payload))
	got = readAll(frames(rawFrame(frameJSON, padded), after))
	if len(got) != 2 || got[0].M != msgLogs || got[1].M != msgResult {
		t.Errorf("a frame of exactly maxFrame bytes: %d messages, want log and result", len(got))
	}
}

// A whole frame that does not decode is skipped; the stream goes on.
func TestProtocolUndecodableFrameSkipped(t *testing.T) {
	stream := frames(
		rawFrame(frameJSON, `{"m":"hello"`), // torn JSON inside a whole frame
		rawFrame('?', "unknown kind"),
		rawFrame(frameEvents, "\xff\xff\xff not a wire batch"),
		rawFrame(frameJSON, `{"m":"result","status":"failed","error":"e"}`),
	)
	got := readAll(stream)
	if len(got) != 1 || got[0].M != msgResult || got[0].Error != "e" {
		t.Errorf("got %+v, want only the result after the bad frames", got)
	}
}
