package trace

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// The fast path reads exactly what the general decoder reads, for every
// line it takes; any other line goes to the decoder.
func FuzzWrittenFormAgreesWithTheDecoder(f *testing.F) {
	for _, line := range strings.Split(strings.TrimSpace(string(defaultJSONL)), "\n")[:40] {
		f.Add([]byte(line))
	}
	for _, line := range []string{
		`{"t_ms":166.329,"thread":1,"ev":"start","phase":"Determining refit engines","parent":"Computing profile costs","steps":1}`,
		`{"t_ms":0.0005,"thread":0,"ev":"step","phase":"a","step":2147483647}`,
		`{"t_ms":1000000000000,"thread":2147483647,"ev":"finish","phase":"é"}`,
		`{"t_ms":01,"thread":1,"ev":"finish","phase":"a"}`,
		`{"t_ms":1.,"thread":1,"ev":"finish","phase":"a"}`,
		`{"t_ms":1,"thread":1,"ev":"start","phase":"a","parent":null,"steps":0}`,
		"{\"t_ms\":1,\"thread\":1,\"ev\":\"finish\",\"phase\":\"\xff\"}",
		`{"t_ms":1,"thread":1,"ev":"finish","phase":"a\"b"}`,
	} {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r := NewReader(nil, "fuzz")
		fast, ok := r.parseWritten(line)
		if !ok {
			return
		}
		slow, err := parseLine(line)
		if err != nil {
			t.Fatalf("the fast path took %q, the decoder refuses it: %v", line, err)
		}
		if fast != slow {
			t.Fatalf("%q:\nfast    %+v\ndecoder %+v", line, fast, slow)
		}
	})
}

// What Writer writes, the fast path reads (so a recorded trace never needs
// the slow decoder); forms it leaves to the decoder still read.
func TestReaderTakesWrittenLinesFastAndOthersThroughTheDecoder(t *testing.T) {
	events := Default()[:50]
	for i := range events {
		events[i].T = time.Duration(i) * 1234 * time.Microsecond // fractions of a millisecond too
	}
	written := writeAll(t, events)
	r := NewReader(nil, "x")
	for _, line := range strings.Split(strings.TrimSpace(written), "\n") {
		if _, ok := r.parseWritten([]byte(line)); !ok {
			t.Errorf("the fast path does not take Writer's line %s", line)
		}
	}
	other := `{ "t_ms": 0e0, "ev": "start", "phase": "a\u00e9", "parent": null, "steps": 2.0 }` + "\n"
	got, err := Read(strings.NewReader(other+written), "x")
	if err != nil || len(got) != 51 || got[0] != (Event{Kind: Start, Phase: "aé", Steps: 2}) || got[50] != events[49] {
		t.Fatalf("read %d events, first %+v, err %v", len(got), got, err)
	}
}

// Reader stops at the first bad line with an error naming it, and ends with
// io.EOF.
func TestReaderErrorsNameTheLine(t *testing.T) {
	in := `{"t_ms":2,"thread":1,"ev":"start","phase":"a","parent":null,"steps":1}
{"t_ms":1,"thread":1,"ev":"finish","phase":"a"}
`
	_, err := Read(strings.NewReader(in), "x")
	if err == nil || err.Error() != "x:2: t_ms 1 is before the previous event's 2 (events must be in time order)" {
		t.Errorf("error %v", err)
	}
	r := NewReader(strings.NewReader(""), "x")
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("empty trace: %v, want io.EOF", err)
	}
}
