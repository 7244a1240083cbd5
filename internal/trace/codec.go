package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxLine bounds one JSON line; real events are under 200 bytes, so anything
// near this is a corrupt or foreign file rather than a long phase name.
const maxLine = 1 << 20

// maxMillis keeps t_ms well inside time.Duration (about 292 years).
const maxMillis = 1e12

// allowedFields is listed in error messages so a typo names its fix.
const allowedFields = "t_ms, thread, ev, phase, parent, steps, step"

// Writer writes events as JSON Lines, one event per line, in the field order
// of the format description on Event. It refuses events that Read would
// reject, so everything it writes reads back.
type Writer struct {
	buf   *bufio.Writer
	enc   *json.Encoder
	last  time.Duration
	wrote bool
}

// NewWriter returns a Writer that buffers output to w; call Flush when done.
func NewWriter(w io.Writer) *Writer {
	buf := bufio.NewWriter(w)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false) // phase names are data, not HTML
	return &Writer{buf: buf, enc: enc}
}

// wireEvent fixes the on-disk field order. Parent is raw so a root start can
// say null explicitly while other kinds omit the field.
type wireEvent struct {
	TMs    json.Number     `json:"t_ms"`
	Thread int             `json:"thread"`
	Ev     Kind            `json:"ev"`
	Phase  string          `json:"phase"`
	Parent json.RawMessage `json:"parent,omitempty"`
	Steps  *int            `json:"steps,omitempty"`
	Step   *int            `json:"step,omitempty"`
}

// Write encodes one event. Events must come in time order.
func (w *Writer) Write(ev Event) error {
	if err := checkEvent(ev); err != nil {
		return fmt.Errorf("trace: cannot write event: %w", err)
	}
	if w.wrote && ev.T < w.last {
		return fmt.Errorf("trace: cannot write event: t_ms %s is before the previous event's %s (events must be in time order)",
			formatMillis(ev.T), formatMillis(w.last))
	}
	w.last, w.wrote = ev.T, true
	return w.enc.Encode(toWire(ev))
}

// Flush writes any buffered events to the underlying writer.
func (w *Writer) Flush() error { return w.buf.Flush() }

func toWire(ev Event) wireEvent {
	out := wireEvent{TMs: json.Number(formatMillis(ev.T)), Thread: ev.Thread, Ev: ev.Kind, Phase: ev.Phase}
	switch ev.Kind {
	case Start:
		out.Parent = json.RawMessage("null")
		if ev.Parent != "" {
			out.Parent, _ = json.Marshal(ev.Parent) // a string always marshals
		}
		steps := ev.Steps
		out.Steps = &steps
	case Step:
		step := ev.Step
		out.Step = &step
	}
	return out
}

// checkEvent holds the per-event rules shared by Writer and Validate; Read
// states the same rules in terms of the JSON fields.
func checkEvent(ev Event) error {
	switch {
	case ev.T < 0:
		return fmt.Errorf("t_ms must be a non-negative number of milliseconds, got %s", formatMillis(ev.T))
	case ev.T > maxMillis*time.Millisecond:
		return fmt.Errorf("t_ms must be at most %d milliseconds, got %s", int64(maxMillis), formatMillis(ev.T))
	case ev.Thread < 0 || ev.Thread > math.MaxInt32:
		return fmt.Errorf("thread must be an integer from 0 to 2147483647, got %d", ev.Thread)
	case ev.Phase == "":
		return errors.New("missing phase (a non-empty phase name)")
	}
	switch ev.Kind {
	case Start:
		if ev.Steps <= 0 || ev.Steps > math.MaxInt32 {
			return fmt.Errorf("start needs steps > 0 (nbSteps, a 32-bit integer), got %d", ev.Steps)
		}
	case Step:
		if ev.Step < 0 || ev.Step > math.MaxInt32 {
			return fmt.Errorf("step must be >= 0 (a 32-bit integer), got %d", ev.Step)
		}
	case Finish:
	default:
		return fmt.Errorf("unknown ev %q (allowed: start, step, finish)", ev.Kind)
	}
	return nil
}

// formatMillis writes d in milliseconds: an integer when whole, else with up
// to three decimals (microsecond resolution, which Read also rounds to).
func formatMillis(d time.Duration) string {
	us := int64(d.Round(time.Microsecond) / time.Microsecond)
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	whole, frac := us/1000, us%1000
	if frac == 0 {
		return sign + strconv.FormatInt(whole, 10)
	}
	return sign + strings.TrimRight(fmt.Sprintf("%d.%03d", whole, frac), "0")
}

// Read parses a JSON Lines trace. name labels errors, which read
// "name:LINE: message" (with ":COL" for JSON syntax errors). Read checks each
// line on its own and that t_ms never decreases; Validate checks the monitor
// contract across lines. Blank lines are rejected so that line N is always
// event N, which keeps Validate's positions meaningful for files. It holds
// every event: Reader reads a trace one event at a time.
func Read(r io.Reader, name string) ([]Event, error) {
	rd := NewReader(r, name)
	var events []Event
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
}

// posError carries a column for errors that have one.
type posError struct {
	col int
	msg string
}

func (e *posError) Error() string { return e.msg }

func parseLine(data []byte) (Event, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Event{}, errors.New("blank line (want one JSON event per line)")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return Event{}, &posError{col: int(syn.Offset), msg: "invalid JSON: " + syn.Error()}
		}
		return Event{}, errors.New("each line must be a JSON object")
	}
	if fields == nil { // the line was `null`
		return Event{}, errors.New("each line must be a JSON object")
	}
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(strings.Split(allowedFields, ", "), key) {
			return Event{}, fmt.Errorf("unknown field %q (allowed: %s)", key, allowedFields)
		}
	}
	return decodeFields(fields)
}

func decodeFields(fields map[string]json.RawMessage) (Event, error) {
	var ev Event
	var err error
	if ev.T, err = decodeMillis(fields["t_ms"]); err != nil {
		return Event{}, err
	}
	if raw, ok := fields["thread"]; ok {
		n, ok := decodeInt(raw)
		if !ok || n < 0 || n > math.MaxInt32 {
			return Event{}, fmt.Errorf("thread must be an integer from 0 to 2147483647, got %s", raw)
		}
		ev.Thread = int(n)
	}
	kind, ok := decodeString(fields["ev"])
	if !ok {
		return Event{}, errors.New("missing ev (allowed: start, step, finish)")
	}
	ev.Kind = Kind(kind)
	if ev.Phase, ok = decodeString(fields["phase"]); !ok || ev.Phase == "" {
		return Event{}, errors.New("missing phase (a non-empty phase name)")
	}
	switch ev.Kind {
	case Start:
		err = decodeStart(fields, &ev)
	case Step:
		err = decodeStep(fields, &ev)
	case Finish:
		err = onlyOn(fields, "finish")
	default:
		err = fmt.Errorf("unknown ev %q (allowed: start, step, finish)", kind)
	}
	return ev, err
}

func decodeStart(fields map[string]json.RawMessage, ev *Event) error {
	if err := onlyOn(fields, "start", "parent", "steps"); err != nil {
		return err
	}
	if raw, ok := fields["parent"]; ok && string(raw) != "null" {
		parent, ok := decodeString(raw)
		if !ok {
			return fmt.Errorf("parent must be a string or null, got %s", raw)
		}
		ev.Parent = parent
	}
	raw, ok := fields["steps"]
	if !ok {
		return errors.New("start needs steps (nbSteps > 0)")
	}
	n, ok := decodeInt(raw)
	if !ok || n <= 0 || n > math.MaxInt32 {
		return fmt.Errorf("start needs steps > 0 (nbSteps, a 32-bit integer), got %s", raw)
	}
	ev.Steps = int(n)
	return nil
}

func decodeStep(fields map[string]json.RawMessage, ev *Event) error {
	if err := onlyOn(fields, "step", "step"); err != nil {
		return err
	}
	raw, ok := fields["step"]
	if !ok {
		return errors.New("step event needs step (the step just completed, >= 0)")
	}
	n, ok := decodeInt(raw)
	if !ok || n < 0 || n > math.MaxInt32 {
		return fmt.Errorf("step must be >= 0 (a 32-bit integer), got %s", raw)
	}
	ev.Step = int(n)
	return nil
}

// onlyOn rejects kind-specific fields on the wrong kind of event.
func onlyOn(fields map[string]json.RawMessage, kind string, allowed ...string) error {
	owner := map[string]string{"parent": "start", "steps": "start", "step": "step"}
	for _, key := range []string{"parent", "steps", "step"} {
		if _, present := fields[key]; !present || slices.Contains(allowed, key) {
			continue
		}
		return fmt.Errorf("%s is only allowed on %s events, not on %s", key, owner[key], kind)
	}
	return nil
}

func decodeMillis(raw json.RawMessage) (time.Duration, error) {
	if raw == nil {
		return 0, errors.New("missing t_ms (milliseconds since the build started)")
	}
	num, ok := jsonNumber(raw)
	if !ok {
		return 0, fmt.Errorf("t_ms must be a non-negative number of milliseconds, got %s", raw)
	}
	ms, err := num.Float64()
	if err != nil || ms < 0 || math.IsNaN(ms) {
		return 0, fmt.Errorf("t_ms must be a non-negative number of milliseconds, got %s", raw)
	}
	if ms > maxMillis {
		return 0, fmt.Errorf("t_ms must be at most %d milliseconds, got %s", int64(maxMillis), raw)
	}
	return time.Duration(math.Round(ms*1000)) * time.Microsecond, nil
}

// decodeInt accepts a JSON integer (also written as 3.0 or 3e0).
func decodeInt(raw json.RawMessage) (int64, bool) {
	num, ok := jsonNumber(raw)
	if !ok {
		return 0, false
	}
	if n, err := num.Int64(); err == nil {
		return n, true
	}
	f, err := num.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, false
	}
	return int64(f), true
}

// jsonNumber accepts only a bare JSON number: encoding/json would also take
// a quoted one, which the format does not allow.
func jsonNumber(raw json.RawMessage) (json.Number, bool) {
	var num json.Number
	if len(raw) == 0 || !strings.ContainsRune("-0123456789", rune(raw[0])) || json.Unmarshal(raw, &num) != nil {
		return "", false
	}
	return num, true
}

func decodeString(raw json.RawMessage) (string, bool) {
	var s string
	if raw == nil || string(raw) == "null" || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
