package native

import (
	"errors"
	"strconv"
	"time"
)

// Status is how a build ended; it mirrors enum tam_status in trtaction.h.
type Status int

const (
	OK          Status = 0 // engine written completely
	Failed      Status = 1 // the library refused the model or failed
	Cancelled   Status = 2 // stopped because step_complete returned false
	Unavailable Status = 3 // the library could not be loaded
)

// statusNames are the statuses' names: the one map between a Status and
// the word a worker's result message carries (internal/build's protocol)
// and messages print.
var statusNames = [...]string{OK: "ok", Failed: "failed", Cancelled: "cancelled", Unavailable: "unavailable"}

func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// ParseStatus is the Status named name (String's word); false for any
// other word.
func ParseStatus(name string) (Status, bool) {
	for s, n := range statusNames {
		if n == name {
			return Status(s), true
		}
	}
	return 0, false
}

// Result is what a finished build returned.
type Result struct {
	Status Status
	Err    string // the backend's message; empty on OK
}

// Stats are the monitor's counters, readable while the build runs.
type Stats struct {
	Callbacks    int64         // all three kinds, dropped ones included
	LastCallback time.Duration // since the build started; -1 before any callback
	Dropped      int64         // lost because the queue was full
}

// LogLine is one line a backend logged; Severity is TensorRT's ILogger
// severity (0 internal error .. 4 verbose).
type LogLine struct {
	Severity int
	Text     string
}

// ErrUnavailable marks a backend shared object that could not be loaded.
var ErrUnavailable = errors.New("backend unavailable")

// errNoCgo is what every build entry point returns in a binary built with
// CGO_ENABLED=0.
var errNoCgo = errors.New("native: built without cgo: only commands that run no build work (plan, validate, report); rebuild with CGO_ENABLED=1 to build engines")
