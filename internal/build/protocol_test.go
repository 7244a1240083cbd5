package build

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
)

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
	p.send(message{M: msgLogs, Logs: []report.LogLine{{Severity: "warning", Text: "x"}}})
	p.send(message{M: msgResult, Status: "ok"})
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
	if got[0].Library != "TensorRT-RTX 1.7" || got[3].Logs[0].Text != "x" || got[4].Status != "ok" {
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
