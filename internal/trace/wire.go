package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// The wire form of events, worker to supervisor: compact binary records in
// batches. A phase name crosses once per build, as a definition that gives
// it a number; events then carry numbers. Times are deltas from the
// previous event, so a record is usually 5 to 8 bytes where its JSON line
// was about 80.
//
//	definition: 0x00, id (uvarint), length (uvarint), name bytes
//	start:      0x01, thread, dt, phase id, parent id (0: none), steps
//	step:       0x02, thread, dt, phase id, step
//	finish:     0x03, thread, dt, phase id
//
// thread, ids, steps and step are uvarints; dt is a zigzag varint of
// nanoseconds since the previous event of the stream (callbacks from
// several threads can arrive slightly out of time order).
const (
	wireName   = 0x00
	wireStart  = 0x01
	wireStep   = 0x02
	wireFinish = 0x03
)

// WireEncoder encodes one build's events for the wire. It remembers which
// names it has sent, so a stream must be decoded whole, in order, by one
// WireDecoder.
type WireEncoder struct {
	ids  map[string]uint64
	last time.Duration
}

// NewWireEncoder starts a stream.
func NewWireEncoder() *WireEncoder { return &WireEncoder{ids: map[string]uint64{"": 0}} }

// Append encodes events onto dst, with definitions of the names not sent
// before.
func (e *WireEncoder) Append(dst []byte, events []Event) []byte {
	for i := range events {
		ev := &events[i]
		phase := e.id(&dst, ev.Phase)
		var parent uint64
		if ev.Kind == Start {
			parent = e.id(&dst, ev.Parent)
		}
		switch ev.Kind {
		case Start:
			dst = append(dst, wireStart)
		case Step:
			dst = append(dst, wireStep)
		default:
			dst = append(dst, wireFinish)
		}
		dst = binary.AppendUvarint(dst, uint64(max(ev.Thread, 0)))
		dst = binary.AppendVarint(dst, int64(ev.T-e.last))
		e.last = ev.T
		dst = binary.AppendUvarint(dst, phase)
		switch ev.Kind {
		case Start:
			dst = binary.AppendUvarint(dst, parent)
			dst = binary.AppendUvarint(dst, uint64(max(ev.Steps, 0)))
		case Step:
			dst = binary.AppendUvarint(dst, uint64(max(ev.Step, 0)))
		}
	}
	return dst
}

// id numbers name, appending its definition to dst the first time.
func (e *WireEncoder) id(dst *[]byte, name string) uint64 {
	if id, ok := e.ids[name]; ok {
		return id
	}
	id := uint64(len(e.ids))
	e.ids[name] = id
	b := append(*dst, wireName)
	b = binary.AppendUvarint(b, id)
	b = binary.AppendUvarint(b, uint64(len(name)))
	*dst = append(b, name...)
	return id
}

// WireDecoder decodes one stream written by a WireEncoder. Decoded events
// share one string per name.
type WireDecoder struct {
	names []string
	last  time.Duration
}

// NewWireDecoder starts reading a stream.
func NewWireDecoder() *WireDecoder { return &WireDecoder{names: []string{""}} }

// maxWireName bounds one name: TensorRT's are under 100 bytes, so a longer
// one means a corrupt stream, not a phase.
const maxWireName = 1 << 16

var errWireTruncated = errors.New("trace: wire batch ends inside a record")

// Decode appends the events of one batch to dst. A corrupt batch returns
// an error and the events before the damage.
func (d *WireDecoder) Decode(dst []Event, batch []byte) ([]Event, error) {
	r := wireReader{b: batch}
	for len(r.b) > 0 {
		tag := r.b[0]
		r.b = r.b[1:]
		if tag == wireName {
			if err := d.define(&r); err != nil {
				return dst, err
			}
			continue
		}
		ev, err := d.event(tag, &r)
		if err != nil {
			return dst, err
		}
		dst = append(dst, ev)
	}
	return dst, nil
}

func (d *WireDecoder) define(r *wireReader) error {
	id, n := r.uvarint(), r.uvarint()
	switch {
	case r.err != nil:
		return r.err
	case id != uint64(len(d.names)):
		return fmt.Errorf("trace: wire name %d defined out of order (expected %d)", id, len(d.names))
	case n > maxWireName || n > uint64(len(r.b)):
		return errWireTruncated
	}
	d.names = append(d.names, string(r.b[:n]))
	r.b = r.b[n:]
	return nil
}

func (d *WireDecoder) event(tag byte, r *wireReader) (Event, error) {
	var ev Event
	switch tag {
	case wireStart:
		ev.Kind = Start
	case wireStep:
		ev.Kind = Step
	case wireFinish:
		ev.Kind = Finish
	default:
		return ev, fmt.Errorf("trace: unknown wire record 0x%02x", tag)
	}
	ev.Thread = r.int32()
	d.last += time.Duration(r.varint())
	ev.T = d.last
	ev.Phase = d.name(r)
	switch ev.Kind {
	case Start:
		ev.Parent = d.name(r)
		ev.Steps = r.int32()
	case Step:
		ev.Step = r.int32()
	}
	return ev, r.err
}

func (d *WireDecoder) name(r *wireReader) string {
	id := r.uvarint()
	if id >= uint64(len(d.names)) {
		if r.err == nil {
			r.err = fmt.Errorf("trace: wire name %d used before it was defined", id)
		}
		return ""
	}
	return d.names[id]
}

// wireReader reads varints, keeping the first error.
type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	return took(r, v, n)
}

func (r *wireReader) varint() int64 {
	v, n := binary.Varint(r.b)
	return took(r, v, n)
}

// took consumes the n bytes a varint took; n <= 0 means none was there.
func took[T uint64 | int64](r *wireReader, v T, n int) T {
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *wireReader) int32() int {
	v := r.uvarint()
	if v > math.MaxInt32 {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *wireReader) fail() {
	if r.err == nil {
		r.err = errWireTruncated
	}
	r.b = nil
}
