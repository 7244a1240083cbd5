package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// maxInterned bounds the distinct phase names a Reader shares between
// events. Real traces have a few dozen; past the bound names are still
// read, only no longer shared.
const maxInterned = 1 << 14

// Reader reads a JSON Lines trace one event at a time, with the checks Read
// makes, in memory that does not grow with the trace: a replay can play a
// file of millions of callbacks as it reads it.
type Reader struct {
	sc    *bufio.Scanner
	name  string
	line  int
	last  time.Duration
	names map[string]string
}

// NewReader reads the trace in r; name labels errors ("name:LINE: ...").
func NewReader(r io.Reader, name string) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	return &Reader{sc: sc, name: name, names: map[string]string{}}
}

// Next returns the next event, or io.EOF after the last one. Any other
// error names the line, and the Reader stays at it.
func (r *Reader) Next() (Event, error) {
	if !r.sc.Scan() {
		if err := r.sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return Event{}, fmt.Errorf("%s:%d: line longer than %d bytes (one JSON event per line)", r.name, r.line+1, maxLine)
			}
			return Event{}, fmt.Errorf("%s:%d: %w", r.name, r.line+1, err)
		}
		return Event{}, io.EOF
	}
	r.line++
	ev, ok := r.parseWritten(r.sc.Bytes())
	if !ok {
		var err error
		if ev, err = parseLine(r.sc.Bytes()); err != nil {
			var se *posError
			if errors.As(err, &se) {
				return Event{}, fmt.Errorf("%s:%d:%d: %s", r.name, r.line, se.col, se.msg)
			}
			return Event{}, fmt.Errorf("%s:%d: %w", r.name, r.line, err)
		}
		ev.Phase, ev.Parent = r.internString(ev.Phase), r.internString(ev.Parent)
	}
	if r.line > 1 && ev.T < r.last {
		return Event{}, fmt.Errorf("%s:%d: t_ms %s is before the previous event's %s (events must be in time order)",
			r.name, r.line, formatMillis(ev.T), formatMillis(r.last))
	}
	r.last = ev.T
	return ev, nil
}

// intern shares one string per distinct name; looking one up allocates
// nothing.
func (r *Reader) intern(b []byte) string {
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	return r.internString(string(b))
}

func (r *Reader) internString(s string) string {
	if shared, ok := r.names[s]; ok {
		return shared
	}
	if len(r.names) < maxInterned {
		r.names[s] = s
	}
	return s
}

// parseWritten reads a line in exactly the form Writer writes it, without
// the general decoder's maps and reflection (a trace file of a million
// callbacks is read about twenty times faster). For any other form, or a
// value it does not read exactly as parseLine would, it reports false and
// parseLine decides; FuzzWrittenFormAgreesWithTheDecoder holds the two to
// the same events.
func (r *Reader) parseWritten(line []byte) (Event, bool) {
	s := scanner{b: line}
	var ev Event
	var ok bool
	if !s.lit(`{"t_ms":`) {
		return Event{}, false
	}
	if ev.T, ok = s.millis(); !ok || !s.lit(`,"thread":`) {
		return Event{}, false
	}
	if ev.Thread, ok = s.count(math.MaxInt32); !ok || !s.lit(`,"ev":`) {
		return Event{}, false
	}
	kind, ok := s.str()
	if !ok || !s.lit(`,"phase":`) {
		return Event{}, false
	}
	phase, ok := s.str()
	if !ok || len(phase) == 0 {
		return Event{}, false
	}
	ev.Phase = r.intern(phase)
	switch string(kind) { // no allocation: the constants are shared
	case string(Start):
		ev.Kind = Start
		if !s.lit(`,"parent":`) {
			return Event{}, false
		}
		if !s.lit("null") {
			parent, ok := s.str()
			if !ok {
				return Event{}, false
			}
			ev.Parent = r.intern(parent)
		}
		if !s.lit(`,"steps":`) {
			return Event{}, false
		}
		if ev.Steps, ok = s.count(math.MaxInt32); !ok || ev.Steps == 0 {
			return Event{}, false
		}
	case string(Step):
		ev.Kind = Step
		if !s.lit(`,"step":`) {
			return Event{}, false
		}
		if ev.Step, ok = s.count(math.MaxInt32); !ok {
			return Event{}, false
		}
	case string(Finish):
		ev.Kind = Finish
	default:
		return Event{}, false
	}
	if !s.lit("}") || !s.done() {
		return Event{}, false
	}
	return ev, true
}

// scanner walks one line for parseWritten.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) done() bool { return s.i == len(s.b) }

// lit consumes the literal text t.
func (s *scanner) lit(t string) bool {
	if len(s.b)-s.i < len(t) || string(s.b[s.i:s.i+len(t)]) != t {
		return false
	}
	s.i += len(t)
	return true
}

// str consumes a JSON string with no escapes and no control characters,
// in valid UTF-8 (the decoder would replace invalid bytes), and returns
// its contents.
func (s *scanner) str() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			if !utf8.Valid(s.b[start:j]) {
				return nil, false
			}
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// count consumes a non-negative integer written with digits only, no
// leading zero, at most limit.
func (s *scanner) count(limit int) (int, bool) {
	j, n := s.i, 0
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		if n = n*10 + int(s.b[j]-'0'); n > limit {
			return 0, false
		}
		j++
	}
	if j == s.i || (s.b[s.i] == '0' && j-s.i > 1) {
		return 0, false
	}
	s.i = j
	return n, true
}

// millis consumes t_ms: a JSON number without sign or exponent, read as
// decodeMillis reads it (microseconds, rounded).
func (s *scanner) millis() (time.Duration, bool) {
	j := s.i
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		j++
	}
	if j == s.i || (s.b[s.i] == '0' && j-s.i > 1) {
		return 0, false
	}
	if j == len(s.b) || s.b[j] != '.' { // whole milliseconds: exact in a float64 too
		ms, ok := s.count(maxMillis)
		return time.Duration(ms) * time.Millisecond, ok
	}
	k := j + 1
	for k < len(s.b) && s.b[k] >= '0' && s.b[k] <= '9' {
		k++
	}
	if k == j+1 {
		return 0, false
	}
	j = k
	ms, err := strconv.ParseFloat(string(s.b[s.i:j]), 64)
	if err != nil || ms > maxMillis {
		return 0, false
	}
	s.i = j
	return time.Duration(math.Round(ms*1000)) * time.Microsecond, true
}
