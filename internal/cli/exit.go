package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/trt-action/trt-action/internal/build"
	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// Exit codes. A run maps to exactly one of them, in exitFor.
const (
	ExitOK          = 0   // every build ok
	ExitFailed      = 1   // a build failed, crashed or was killed
	ExitInvalid     = 2   // invalid input or usage
	ExitBudget      = 3   // a budget was exceeded and nothing else failed
	ExitOutput      = 4   // an output (report, summary, JUnit, step outputs) could not be written
	ExitInterrupted = 130 // SIGINT
	ExitTerminated  = 143 // SIGTERM
)

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// flagFileError is a usage error about the file a flag names. A positioned
// error (FILE:LINE:COL: …) keeps its position first, for editors and
// problem matchers, and names the flag at the end.
func flagFileError(flag string, err error) error {
	if msg := err.Error(); positioned.MatchString(msg) {
		return usagef("%s (%s)", msg, flag)
	}
	return usagef("%s: %v", flag, err)
}

// codeForError maps an error that ended a command early to an exit code.
func codeForError(err error) int {
	var ue usageError
	var me matrix.Errors
	var oe outputs.Error
	var lu *cache.LibraryUnknownError
	var rc runfiles.Collisions
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue), errors.As(err, &me), errors.As(err, &rc):
		return ExitInvalid
	case errors.As(err, &lu): // --trt-lib or the variable says where it is
		return ExitInvalid
	case errors.As(err, &oe):
		return ExitOutput
	}
	return ExitFailed
}

// What fails the step (--fail-on).
const (
	failOnFailure = "failure" // failed, crashed or killed builds
	failOnBudget  = "budget"  // those, and blown budgets and regressions
	failOnNever   = "never"   // only invalid input and signals
)

var failOnChoices = []string{failOnFailure, failOnBudget, failOnNever}

// checkFailOn refuses a --fail-on value that is not one of failOnChoices.
func checkFailOn(v string) error {
	if slices.Contains(failOnChoices, v) {
		return nil
	}
	return usagef("--fail-on %q: allowed: %s", v, strings.Join(failOnChoices, ", "))
}

// exitFor maps a finished run to its exit code. cause is what build.Run
// returned: a build.Interrupted for a run a signal stopped. A regression
// over the fail threshold counts as a blown budget.
func exitFor(r *report.Report, cause error, failOn string) int {
	if code, ok := interruptedExit(cause); ok {
		return code
	}
	if failOn == failOnNever {
		return ExitOK
	}
	code := ExitOK
	if len(r.Regressions) > 0 {
		code = ExitBudget
	}
	for _, b := range r.Builds {
		switch b.Status {
		// A build still pending or running in a finished report never
		// ended: its shard was killed, or its report is from a lost runner.
		case report.StatusFailed, report.StatusCrashed, report.StatusKilled, report.StatusPending, report.StatusRunning:
			return ExitFailed
		case report.StatusBudgetExceeded, report.StatusCancelled:
			code = ExitBudget
		}
	}
	if failOn == failOnFailure {
		return ExitOK
	}
	return code
}

// interruptedExit is the exit code of a run a signal stopped: 128 plus the
// signal's number, as a shell reports it.
func interruptedExit(cause error) (int, bool) {
	var in build.Interrupted
	if !errors.As(cause, &in) {
		return 0, false
	}
	switch in.Signal {
	case os.Interrupt:
		return ExitInterrupted, true
	case syscall.SIGTERM:
		return ExitTerminated, true
	}
	return ExitFailed, true // Run stops only on SIGINT and SIGTERM
}
