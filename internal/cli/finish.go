package cli

import (
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
)

// runEnding is what build and merge need to end a run the same way.
type runEnding struct {
	out     *outputs.Outputs
	publish publishFlags
	failOn  string
	locate  func(build string) (file string, line int) // a build's place in the matrix, for annotations
}

// finishRun ends a run whose report is final: the outputs written once,
// then the comment and check run. cause is build.Run's: a run a signal
// stopped in this process publishes nothing, since the runner's SIGTERM
// after SIGINT is at most 7.5 s away. How the run ended is the report's
// alone (judge): it returns that (a runEnd), or nil when the step passes.
func (c *Command) finishRun(r *report.Report, cause error, e runEnding) error {
	outErr := e.out.Final(r)
	if cause == nil {
		c.publish(e.publish, r, e.out, e.locate)
	}
	outcome := judge(r, e.failOn)
	if outcome == nil && outErr == nil {
		return nil
	}
	return runEnd{outcome: outcome, outputs: outErr}
}

// runEnd is how a finished run that did not pass ended: its verdict or
// the signal that stopped it, and the outputs that could not be written
// (an outputs.Error). exitCode finds both inside it.
type runEnd struct {
	outcome error
	outputs error
}

func (e runEnd) Error() string {
	if e.outputs != nil {
		return e.outputs.Error()
	}
	return e.outcome.Error()
}

func (e runEnd) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.outcome, e.outputs} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
