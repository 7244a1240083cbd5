package trace

import (
	"bytes"
	"slices"
	"testing"
)

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"t_ms":12,"thread":1,"ev":"start","phase":"Building engine","parent":null,"steps":6}
{"t_ms":13.25,"thread":1,"ev":"step","phase":"Building engine","step":0}
{"t_ms":40,"thread":1,"ev":"finish","phase":"Building engine"}
`))
	f.Add([]byte(`{"t_ms":0.0004,"ev":"start","phase":"a\u00e9<&>","parent":"p","steps":2e0}`))
	f.Add([]byte(`{"t_ms":1,"ev":"step","phase":"a","step":1.5}`))
	f.Add([]byte("{\"t_ms\":1e12,\"ev\":\"finish\",\"phase\":\"\xff\"}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := Read(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		// Whatever Read accepts, Writer writes, and the written form is a
		// fixed point: it reads back to the same events and rewrites to
		// the same bytes.
		first := writeAll(t, events)
		again, err := Read(bytes.NewReader([]byte(first)), "rewritten")
		if err != nil {
			t.Fatalf("rereading written events: %v\n%s", err, first)
		}
		if !slices.Equal(again, events) {
			t.Fatalf("events changed through write and read:\n%+v\n%+v", events, again)
		}
		if second := writeAll(t, again); second != first {
			t.Fatalf("rewrite differs:\n%s\n%s", first, second)
		}
	})
}

func FuzzConvertANSI(f *testing.F) {
	f.Add(redraw(0, "[----------] A 0/2") + redraw(0, "[==========] A 1/2", " [-] B 0/3") + redraw(2) + "Finish\n")
	f.Add("log\n\x1b[0G\x1b[2K  [-] deep 0/1\n\x1b[9A\x1b[0G\x1b[2K\n\x1b[2K[-] x 0/1\x1b[0G")
	f.Add(redraw(0, "[-] A 0/2", " [-] A 0/2"))
	f.Fuzz(func(t *testing.T, in string) {
		events, err := ConvertANSI(bytes.NewReader([]byte(in)))
		if err != nil {
			return
		}
		if len(events) == 0 {
			t.Fatal("no events and no error")
		}
		if err := Validate(events); err != nil {
			t.Fatalf("converted events break the contract: %v", err)
		}
		writeAll(t, events) // and the writer accepts all of them
	})
}
