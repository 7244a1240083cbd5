// Package eta estimates how long a running build has left, and only when the
// estimate rests on something: a previous run of the same build, or enough
// progress through the build's top-level phase to extrapolate from.
package eta

import (
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

// Source says what an estimate rests on.
type Source int

const (
	None     Source = iota // no estimate: nothing to go on
	Baseline               // the same build's duration in a baseline report
	Progress               // linear extrapolation of the root phase's steps
)

// Thresholds below which progress says too little to extrapolate from: the
// first steps of a TensorRT build are short set-up steps, so one step or a
// few seconds predict nothing.
const (
	MinStepsDone = 2
	MinElapsed   = 5 * time.Second
)

// Estimate is the time a build has left.
type Estimate struct {
	Source Source
	Left   time.Duration // never negative
	// Overdue is how far the build has run past its baseline duration;
	// zero unless Source is Baseline.
	Overdue time.Duration
}

// Known reports whether there is an estimate to show.
func (e Estimate) Known() bool { return e.Source != None }

// Baselines maps build names to their durations in a previous report. Only
// builds that succeeded count: a failed or stopped build's duration says
// nothing about how long a complete one takes.
func Baselines(r *report.Report) map[string]time.Duration {
	if r == nil {
		return nil
	}
	out := map[string]time.Duration{}
	for _, b := range r.Builds {
		if b.Status == report.StatusOK && b.DurationMs > 0 {
			out[b.Name] = time.Duration(b.DurationMs) * time.Millisecond
		}
	}
	return out
}

// For estimates a running build's time left: from its baseline duration when
// it has one (previous > 0), else from its root phase's progress, else none.
// elapsed is the build's running time; active is its running phase chain,
// root first.
func For(previous, elapsed time.Duration, active []event.ActivePhase) Estimate {
	if previous > 0 {
		return FromBaseline(previous, elapsed)
	}
	if len(active) == 0 {
		return Estimate{}
	}
	return FromProgress(active[0])
}

// FromBaseline is the baseline duration minus the time already spent; past
// it the build is overdue rather than given a negative time left.
func FromBaseline(previous, elapsed time.Duration) Estimate {
	if elapsed >= previous {
		return Estimate{Source: Baseline, Overdue: elapsed - previous}
	}
	return Estimate{Source: Baseline, Left: previous - elapsed}
}

// FromProgress extrapolates the root phase's step rate over its remaining
// steps. The rate is taken from the root phase's own elapsed time, since
// that is the time those steps took.
func FromProgress(root event.ActivePhase) Estimate {
	if root.Done < MinStepsDone || root.Elapsed < MinElapsed || root.Done >= root.Steps {
		return Estimate{}
	}
	perStep := root.Elapsed / time.Duration(root.Done)
	return Estimate{Source: Progress, Left: perStep * time.Duration(root.Steps-root.Done)}
}
