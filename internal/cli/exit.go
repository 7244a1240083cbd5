package cli

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"syscall"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// Exit codes, the rows of the exit-code table in docs/budgets.md. exitCode is the
// one place that picks one: a command returns an error, typed where the
// code depends on it, and nothing else.
const (
	ExitOK          = 0   // every build ok
	ExitFailed      = 1   // a build failed, crashed or was killed; or any other error
	ExitInvalid     = 2   // invalid input or usage
	ExitBudget      = 3   // a budget was exceeded and nothing else failed
	ExitOutput      = 4   // an output (report, summary, JUnit, step outputs) could not be written
	ExitInterrupted = 130 // SIGINT
	ExitTerminated  = 143 // SIGTERM
)

// exitCode maps the error a command ended with to the process's exit
// code, in order of precedence: a signal that stopped a run, then outputs
// that could not be written (the report that would show the builds is
// what is missing), then invalid input, then the builds' verdict; any
// other error is a failure.
func exitCode(err error) int {
	var in interrupted
	var oe outputs.Error
	var v verdict
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &in) && in.signal == report.SignalTerminate:
		return ExitTerminated
	case errors.As(err, &in):
		return ExitInterrupted
	case errors.As(err, &oe):
		return ExitOutput
	case isInvalid(err):
		return ExitInvalid
	case errors.As(err, &v) && v == overBudget:
		return ExitBudget
	}
	return ExitFailed // buildsFailed, and anything not typed above
}

// isInvalid reports whether err is about input the user gave: the command
// line, the matrix file, the files the run would read and write, a
// library --trt-lib or a variable names.
func isInvalid(err error) bool {
	var ue usageError
	var me matrix.Errors
	var rc runfiles.Collisions
	var lu *cache.LibraryUnknownError
	return errors.As(err, &ue) || errors.As(err, &me) || errors.As(err, &rc) || errors.As(err, &lu)
}

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// invalid types err, a problem with input the user named (a file, a
// cache folder), by the exit-code table: invalid input (exit 2, in err's
// own words) when the path names nothing, like a missing matrix file, or
// what was read there is not what it should be; any other error (exit 1)
// when a file there could not be read (couldNotRead). Help asked for
// stays what it is.
func invalid(err error) error {
	if err == nil || isInvalid(err) || errors.Is(err, flag.ErrHelp) || couldNotRead(err) {
		return err
	}
	return usageError{err.Error()}
}

// couldNotRead reports whether err is the file system refusing to read a
// file that is there (no permission, a folder, an I/O error), rather than
// a path that names nothing (it, or a folder on the way, is missing).
func couldNotRead(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR)
}

// flagFileError is invalid about the file a flag names, in words that
// name the flag. A positioned error (FILE:LINE:COL: …) keeps its position
// first, for editors and problem matchers, and names the flag at the end.
func flagFileError(flag string, err error) error {
	if msg := err.Error(); positioned.MatchString(msg) {
		return usagef("%s (%s)", msg, flag) // a place in the file: what is there is wrong
	}
	return invalid(fmt.Errorf("%s: %w", flag, err))
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

// verdict is what a finished run's builds mean when they fail the step.
// Its words are the run's headline, already printed.
type verdict string

func (v verdict) Error() string { return string(v) }

const (
	buildsFailed verdict = "a build failed, crashed or was killed"
	overBudget   verdict = "a budget was exceeded (or a regression passed its fail threshold) and nothing else failed"
)

// interrupted is a run a signal stopped, by the signal its report
// records (report.Signal): SIGTERM exits 143, SIGINT (or a signal an
// older report did not name) 130.
type interrupted struct{ signal string }

func (e interrupted) Error() string { return "interrupted by " + e.signal }

// judge is how a finished run ended, read from its report alone, so that
// a build and a merge of its reports decide alike: the signal that
// stopped it (a merged report records the first interrupted shard's), which
// fails the step whatever failOn says, as the run's own job failed; else,
// under failOn, buildsFailed or overBudget, or nil when the step passes.
// A regression over the fail threshold counts as a blown budget, and so
// does a cancelled build in a run no signal stopped: the run budget
// stopped it or left it unstarted.
func judge(r *report.Report, failOn string) error {
	if r.Signal != "" {
		return interrupted{r.Signal}
	}
	if failOn == failOnNever {
		return nil
	}
	var v error
	if len(r.Regressions) > 0 {
		v = overBudget
	}
	for _, b := range r.Builds {
		switch b.Status {
		// A build still pending or running in a finished report never
		// ended: its shard was killed, or its report is from a lost runner.
		case report.StatusFailed, report.StatusCrashed, report.StatusKilled, report.StatusPending, report.StatusRunning:
			return buildsFailed
		case report.StatusBudgetExceeded, report.StatusCancelled:
			v = overBudget
		}
	}
	if failOn == failOnFailure {
		return nil
	}
	return v
}
