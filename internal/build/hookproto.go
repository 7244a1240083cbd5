package build

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
)

// What trt-action's Python hook (internal/pyhook) and the supervisor of a
// script build say to each other. Every process of the command that loads
// the hook opens its own connection to a Unix SOCK_SEQPACKET socket named
// in its environment (children inherit the environment, not descriptors),
// and each message is one JSON object in one packet, so neither side needs
// framing. Times are CLOCK_MONOTONIC nanoseconds (Python's
// time.monotonic_ns()), one clock for every process on the machine: the
// supervisor puts them on the build's clock without a handshake.

// Hook message kinds.
const (
	hookHello  = "hello" // a process loaded the hook
	hookBegin  = "begin" // a TensorRT build began
	hookEvents = "ev"    // a batch of its callbacks
	hookEnd    = "end"   // it ended
	hookStop   = "stop"  // supervisor to hook: every step_complete returns False from now on
)

// What an end message's result says the bindings' build call did.
const (
	hookResultOK    = "ok"    // returned an engine
	hookResultNone  = "none"  // returned None: TensorRT built nothing
	hookResultError = "error" // raised; the end's error says what
)

// maxHookPacket is the read buffer of one connection: the hook keeps
// every message under 60,000 bytes (internal/pyhook's wire.LIMIT), and a
// longer one is cut by the socket and then does not decode (dropped).
// Every process of a command has a connection, so it is kept small.
const maxHookPacket = 64 << 10

// hookMsg is one message from a hook, all kinds in one shape.
type hookMsg struct {
	M string `json:"m"`

	// hello
	PID        int      `json:"pid"`
	PPID       int      `json:"ppid"`
	Python     string   `json:"python"`
	Executable string   `json:"executable"`
	Argv       []string `json:"argv"`

	// begin, ev, end
	ID int   `json:"id"` // the build, counted from 1 in its process
	T  int64 `json:"t"`  // CLOCK_MONOTONIC ns

	// begin
	Entry       string          `json:"entry"`
	Route       string          `json:"route"`
	RouteNote   string          `json:"route_note"` // why the build took its route; "" when the hook was given no native folder (routeNote)
	Bindings    string          `json:"bindings"`
	Library     string          `json:"library"`
	UserMonitor bool            `json:"user_monitor"`
	Config      json.RawMessage `json:"config"`
	Network     *report.Network `json:"network"`

	// ev
	E []hookEvent `json:"e"`

	// end
	Result        string `json:"result"` // a hookResult
	Bytes         int64  `json:"bytes"`
	Error         string `json:"error"`
	Stopped       bool   `json:"stopped"`
	UserCancelled bool   `json:"user_cancelled"`
}

// hookEvent is one callback, sent as an array:
// [T, THREAD, "s", PHASE, PARENT_or_null, NBSTEPS], [T, THREAD, "p", PHASE, STEP]
// or [T, THREAD, "f", PHASE].
type hookEvent struct {
	mono int64
	ev   trace.Event
}

func (e *hookEvent) UnmarshalJSON(data []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		return err
	}
	if len(parts) < 4 {
		return errors.New("callback: too few fields")
	}
	var kind string
	if err := unmarshalAll(parts[:4], &e.mono, &e.ev.Thread, &kind, &e.ev.Phase); err != nil {
		return err
	}
	switch {
	case kind == "s" && len(parts) == 6:
		var parent *string
		if err := unmarshalAll(parts[4:], &parent, &e.ev.Steps); err != nil {
			return err
		}
		e.ev.Kind = trace.Start
		if parent != nil {
			e.ev.Parent = *parent
		}
	case kind == "p" && len(parts) == 5:
		e.ev.Kind = trace.Step
		return json.Unmarshal(parts[4], &e.ev.Step)
	case kind == "f" && len(parts) == 4:
		e.ev.Kind = trace.Finish
	default:
		return fmt.Errorf("callback: unknown kind %q with %d fields", kind, len(parts))
	}
	return nil
}

func unmarshalAll(parts []json.RawMessage, into ...any) error {
	for i, p := range parts {
		if err := json.Unmarshal(p, into[i]); err != nil {
			return err
		}
	}
	return nil
}

// decodeHookMsg reads one packet. A packet that does not decode is
// dropped by the caller: a damaged message must not end the build.
func decodeHookMsg(packet []byte) (hookMsg, error) {
	var m hookMsg
	err := json.Unmarshal(packet, &m)
	return m, err
}

// stopMessage is the packet that asks every build of a process to stop.
func stopMessage(why string) []byte {
	data, _ := json.Marshal(struct {
		M   string `json:"m"`
		Why string `json:"why"`
	}{hookStop, why})
	return data
}

// monoClock converts CLOCK_MONOTONIC readings to a build's clock.
type monoClock struct{ zero int64 }

func (c monoClock) at(mono int64) time.Duration { return time.Duration(mono - c.zero) }
