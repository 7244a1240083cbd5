// Package trace defines one progress-monitor callback as an Event, the JSON
// Lines trace format that records and replays them, and the converter from
// NVIDIA's sample-monitor ANSI recordings.
package trace

import "time"

// Kind names the TensorRT IProgressMonitor callback an Event records.
type Kind string

const (
	Start  Kind = "start"  // phaseStart(phase, parent, steps)
	Step   Kind = "step"   // stepComplete(phase, step)
	Finish Kind = "finish" // phaseFinish(phase)
)

// Event is one callback. On disk it is one JSON line:
//
//	{"t_ms":12,"thread":1,"ev":"start","phase":"Building engine","parent":null,"steps":6}
//	{"t_ms":13,"thread":1,"ev":"step","phase":"Building engine","step":0}
//	{"t_ms":40,"thread":1,"ev":"finish","phase":"Building engine"}
type Event struct {
	T      time.Duration // since the build started
	Thread int           // which callback thread; 1-based, 0 when unknown
	Kind   Kind
	Phase  string
	Parent string // "" for a root phase (null on disk); Start only
	Steps  int    // Start only: nbSteps
	Step   int    // Step only: the step just completed
}
