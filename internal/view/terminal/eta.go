package terminal

import (
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

// eta.go estimates how long a running build has left, and only when the
// estimate rests on something: a previous run of the same build, or enough
// progress through the build's top-level phase to extrapolate from.

// etaSource says what an estimate rests on.
type etaSource int

const (
	etaNone     etaSource = iota // no estimate: nothing to go on
	etaBaseline                  // the same build's duration in a baseline report
	etaProgress                  // linear extrapolation of the root phase's steps
)

// Thresholds below which progress says too little to extrapolate from: the
// first steps of a TensorRT build are short set-up steps, so one step or a
// few seconds predict nothing.
const (
	etaMinSteps   = 2
	etaMinElapsed = 5 * time.Second
)

// estimate is the time a build has left.
type estimate struct {
	Source etaSource
	Left   time.Duration // never negative
	// Overdue is how far the build has run past its baseline duration;
	// zero unless Source is etaBaseline.
	Overdue time.Duration
}

// baselineDurations maps build names to their durations in a previous report. Only
// builds that succeeded count: a failed or stopped build's duration says
// nothing about how long a complete one takes.
func baselineDurations(r *report.Report) map[string]time.Duration {
	if r == nil {
		return nil
	}
	out := map[string]time.Duration{}
	for i := range r.Builds {
		// A cache hit counts with the time of the build that made its engine.
		if ms, ok := report.BuildTime(&r.Builds[i]); ok && ms > 0 {
			out[r.Builds[i].Name] = time.Duration(ms) * time.Millisecond
		}
	}
	return out
}

// estimateLeft estimates a running build's time left: from its baseline duration when
// it has one (previous > 0), else from its root phase's progress, else none.
// elapsed is the build's running time; active is its running phase chain,
// root first.
func estimateLeft(previous, elapsed time.Duration, active []event.ActivePhase) estimate {
	if previous > 0 {
		return estimateFromBaseline(previous, elapsed)
	}
	if len(active) == 0 {
		return estimate{}
	}
	return estimateFromProgress(active[0])
}

// estimateFromBaseline is the baseline duration minus the time already spent; past
// it the build is overdue rather than given a negative time left.
func estimateFromBaseline(previous, elapsed time.Duration) estimate {
	if elapsed >= previous {
		return estimate{Source: etaBaseline, Overdue: elapsed - previous}
	}
	return estimate{Source: etaBaseline, Left: previous - elapsed}
}

// estimateFromProgress extrapolates the root phase's step rate over its remaining
// steps. The rate is taken from the root phase's own elapsed time, since
// that is the time those steps took.
func estimateFromProgress(root event.ActivePhase) estimate {
	if root.Done < etaMinSteps || root.Elapsed < etaMinElapsed || root.Done >= root.Steps {
		return estimate{}
	}
	perStep := root.Elapsed / time.Duration(root.Done)
	return estimate{Source: etaProgress, Left: perStep * time.Duration(root.Steps-root.Done)}
}
