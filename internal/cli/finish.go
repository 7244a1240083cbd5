package cli

import (
	"errors"
	"fmt"

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
// the comment and check run, then the exit code. cause is build.Run's: a
// run a signal stopped publishes nothing, since the runner's SIGTERM after
// SIGINT is at most 7.5 s away.
func (c *Command) finishRun(r *report.Report, cause error, e runEnding) int {
	outErr := e.out.Final(r)
	if cause == nil {
		c.publish(e.publish, r, e.out.NotesPath(), e.out.Extra, e.locate)
	}
	return c.endRun(exitFor(r, cause, e.failOn), outErr)
}

// endRun is the last thing a run prints: every output that could not be
// written, and, as the last line, the exit code that follows from it.
// Output failures outrank the builds' results, since the report that
// would tell those is what is missing, but not a signal.
func (c *Command) endRun(code int, outErr error) int {
	var oe outputs.Error
	if !errors.As(outErr, &oe) {
		return code
	}
	if code != ExitInterrupted && code != ExitTerminated {
		code = ExitOutput
	}
	c.printUntrusted(c.Streams.Err, fmt.Sprintf("%v: exit %d\n", oe, code))
	return code
}
