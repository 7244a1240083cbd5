package trace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// wireSample is the real tree with times that go back now and then (two
// threads' callbacks interleave) and thread numbers.
func wireSample() []Event {
	events := Default()
	var now time.Duration
	for i := range events {
		now += time.Duration(i%7) * 1300 * time.Nanosecond
		events[i].T = now
		if i%5 == 3 {
			events[i].T -= 2 * time.Microsecond
		}
		events[i].Thread = 1 + i%3
	}
	return events
}

func TestWireRoundTripsEveryField(t *testing.T) {
	events := wireSample()
	enc, dec := NewWireEncoder(), NewWireDecoder()
	var got []Event
	for i := 0; i < len(events); i += 1000 { // several batches of one stream
		batch := events[i:min(i+1000, len(events))]
		var err error
		if got, err = dec.Decode(got, enc.Append(nil, batch)); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, events) {
		t.Fatal("events differ after the wire")
	}
}

// Names cross once per stream; the same events again cost only records,
// about a tenth of their JSON.
func TestWireSendsNamesOnce(t *testing.T) {
	events := wireSample()
	enc := NewWireEncoder()
	first := enc.Append(nil, events)
	second := enc.Append(nil, events)
	if bytes.Contains(second, []byte("Measuring tactic time")) || !bytes.Contains(first, []byte("Measuring tactic time")) {
		t.Error("a name was sent again, or never")
	}
	js, _ := json.Marshal(events)
	if len(second)*8 > len(js) {
		t.Errorf("%d events: %d bytes on the wire, %d as JSON; want under an eighth", len(events), len(second), len(js))
	}
}

func TestWireRefusesDamage(t *testing.T) {
	events := wireSample()[:50]
	batch := NewWireEncoder().Append(nil, events)
	got, err := NewWireDecoder().Decode(nil, batch[:len(batch)-1])
	if err == nil || len(got) == 0 || len(got) >= len(events) {
		t.Errorf("cut batch: %d events, error %v; want the events before the cut and an error", len(got), err)
	}
	// A decoder that missed the definitions cannot name the phases.
	later := NewWireEncoder()
	later.Append(nil, events)
	if _, err := NewWireDecoder().Decode(nil, later.Append(nil, events)); err == nil {
		t.Error("names used before their definition decoded without error")
	}
	if _, err := NewWireDecoder().Decode(nil, []byte{0x7f}); err == nil {
		t.Error("an unknown record decoded without error")
	}
}

// The wire batch is trace's; this fuzzes the decoder against any bytes.
func FuzzWireDecode(f *testing.F) {
	f.Add(NewWireEncoder().Append(nil, wireSample()[:20]))
	f.Add([]byte{0x00, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, _ := NewWireDecoder().Decode(nil, data)
		for _, ev := range evs {
			if ev.Kind != Start && ev.Kind != Step && ev.Kind != Finish {
				t.Fatalf("decoded kind %q", ev.Kind)
			}
		}
	})
}
