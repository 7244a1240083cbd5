// Package event holds what a running build matrix tells its views: the live
// events, a running build's progress, and the View interface.
package event

import (
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// EventKind is what happened in a running build matrix.
type EventKind int

const (
	RunStarted    EventKind = iota + 1 // Total builds known
	BuildStarted                       // Build, Name
	PhaseStarted                       // Path, Steps (only down to the views' depth: len(Path))
	PhaseFinished                      // Path, Done, Steps, Elapsed (phase duration)
	Heartbeat                          // Progress, about once a second per running build
	BudgetWarning                      // Message: a budget passed its warn percentage
	Stopping                           // Message: soft stop requested (budget, signal); Build -1 = all
	LibraryLog                         // Message, Severity: a warning or error TensorRT logged
	BuildFinished                      // Result
	RunFinished                        // Run: the final report
	Warning                            // Message: something the run worked around (a corrupt cache entry); Build -1 = the run
	// A build that runs a command (a builder script) has TensorRT builds
	// inside it; their phase events carry Inner, and these mark their ends.
	InnerStarted  // Inner, Message: a TensorRT build began inside a script build ("pid 4711, build_serialized_network, python route")
	InnerFinished // Inner, InnerResult: that TensorRT build ended
	Output        // Message: one line the script build's command printed (untrusted text; views escape it)
	// The shared engine cache store (a remote behind the cache folder).
	CacheTransfer // Build, Transfer: a pull or push of the build's entry moved bytes (a few times a second at most), or ended (Transfer.Ended)
	CachePushed   // Build, Result: a push that ended after its build did; Result is the build's entry with Cache.Pushed and Cache.Transfer set
)

// Event is what the run tells its views. Views receive events in order, from
// one goroutine, so they keep their own state without locks.
type Event struct {
	Kind     EventKind
	At       time.Duration // since the run started
	Build    int           // index into the run's builds; -1 for run-wide events
	Name     string        // build name
	Total    int           // RunStarted: number of builds
	Path     []string      // phase events: names from the root phase down
	Steps    int
	Done     int
	Elapsed  time.Duration // PhaseFinished: the phase's own duration
	Message  string
	Severity string // LibraryLog: error or warning
	// Inner is the TensorRT build (TensorRTBuild.Index, 1-based) a phase,
	// InnerStarted or InnerFinished event of a script build is about; 0
	// for every event of an ONNX build.
	Inner       int
	InnerResult *report.TensorRTBuild // InnerFinished
	Progress    *Progress
	Transfer    *Transfer // CacheTransfer
	Result      *report.Build
	Run         *report.Report
}

// Progress is a running build's state at one moment.
type Progress struct {
	Elapsed    time.Duration
	Active     []ActivePhase // running phases, root first, innermost last
	Callbacks  int64
	Silent     time.Duration // since the last callback
	BudgetLeft time.Duration // time to the nearest limit; -1 when no limit applies
	BudgetName string        // which limit BudgetLeft refers to ("build", "phase Timing tactics", ...)
	// Script builds: Active is the phases of TensorRT build Inner (the
	// newest running one); InnerRunning counts the running ones, and
	// InnerDone those that ended. Inner is 0 while none runs.
	Inner        int
	InnerRunning int
	InnerDone    int
	// Memory is what the build's processes hold; nil before the first
	// look at them.
	Memory *MemoryUse
}

// MemoryUse is a running build's memory at one moment.
type MemoryUse struct {
	Host, PeakHost int64 // its processes' resident bytes, now and at most so far
	GPU, PeakGPU   int64 // their GPU memory, now and at most so far, when HasGPU
	HasGPU         bool  // a process of the build was seen on a GPU
}

// Transfer is a pull or push between a build and the shared cache store,
// at one moment.
type Transfer struct {
	Direction string        // report.TransferPull or report.TransferPush
	Bytes     int64         // moved so far
	Total     int64         // to move; 0 when not known
	Elapsed   time.Duration // since the transfer began
	Ended     bool          // the last event of this transfer
	Err       string        // why it ended without moving everything; "" otherwise
}

// ActivePhase is one running phase.
type ActivePhase struct {
	Name    string
	Done    int // steps completed
	Steps   int
	Elapsed time.Duration
}

// View shows a run as it goes: plain lines, Actions groups, a terminal, an event stream.
type View interface {
	Handle(Event)
	// Close flushes; called once after RunFinished (or after an interrupt's final events).
	Close() error
}
