package build

import (
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// How a script build and the TensorRT builds inside it ended. trt-action
// decides from what it saw, never from the exit code alone: a cancelled
// TensorRT build returns None, and each program then fails its own way
// (an assert, AttributeError, RuntimeError, sys.exit, an empty engine
// file), or does not fail at all.

// commandBudgets are the limits that cover the whole command: the build
// budget (and the run's, which newBudget adds). Phase and stall budgets
// apply inside each TensorRT build (innerBudgets).
func commandBudgets(b matrix.Budgets) matrix.Budgets {
	return matrix.Budgets{Build: b.Build, WarnPercent: b.WarnPercent, Grace: b.Grace}
}

// innerEnding is what one TensorRT build's status depends on.
type innerEnding struct {
	end    *hookMsg // its end message; nil when its process ended first
	gone   bool     // its process ended while it ran
	ctl    outcome  // what control did to the command
	budget string   // the kind of budget that stopped the command; "" for a signal or none
}

// decideInnerStatus is the status and reason of one TensorRT build.
func decideInnerStatus(e innerEnding) (status, reason string) {
	stoppedBy := stopStatus(e.budget)
	switch {
	case e.end != nil && e.end.Result == hookResultOK:
		return report.StatusOK, ""
	case e.end == nil && e.ctl.killWhy != "":
		if e.ctl.graceKill && e.budget != "" {
			return stoppedBy, e.ctl.stopWhy + "; " + e.ctl.killWhy
		}
		return report.StatusKilled, strings.TrimPrefix(e.ctl.stopWhy+"; "+e.ctl.killWhy, "; ")
	case e.end == nil:
		return report.StatusCrashed, "its process ended during the build"
	case e.end.Stopped:
		return stoppedBy, e.ctl.stopWhy
	case e.end.UserCancelled:
		return report.StatusCancelled, "the program's own progress monitor cancelled the build"
	case e.end.Result == hookResultError && e.end.Error != "":
		return report.StatusFailed, e.end.Error
	}
	return report.StatusFailed, "TensorRT returned no engine"
}

// stopStatus is the status of a build a stop ended: its own budget makes
// it budget-exceeded; a signal or the run budget, cancelled.
func stopStatus(budget string) string {
	if budget != "" && budget != kindRun {
		return report.StatusBudgetExceeded
	}
	return report.StatusCancelled
}

// scriptEnding is everything a script build's status depends on.
type scriptEnding struct {
	reaped  *reaperResult // how the command ended; nil when the reaper said nothing
	exit    string        // how the reaper itself ended, when it said nothing
	ctl     outcome
	budget  string
	inner   []report.TensorRTBuild
	output  string // the command's last line, "" if none
	engines string // what is wrong with the declared engine files, "" if nothing
}

// decideScriptStatus is the status and reason of a script build. A
// command a stop (a budget, a signal) reached ended by it, whatever its
// exit code; one that exited 0 after a TensorRT build inside it failed
// failed; one that exited 0 without declared engines in place failed.
func decideScriptStatus(e scriptEnding) (status, reason string) {
	ctl := e.ctl
	switch {
	case e.reaped == nil:
		return report.StatusCrashed, "the command's supervisor process (trt-action's reaper) ended without a status: " + e.exit
	case e.reaped.StartError != "":
		return report.StatusFailed, "the command could not start: " + e.reaped.StartError
	case ctl.killWhy != "" && ctl.graceKill && e.budget != "":
		return stopStatus(e.budget), ctl.stopWhy + "; " + ctl.killWhy
	case ctl.killWhy != "" && ctl.stopWhy != "":
		return report.StatusKilled, ctl.stopWhy + "; " + ctl.killWhy
	case ctl.killWhy != "":
		return report.StatusKilled, ctl.killWhy
	case ctl.stopWhy != "":
		return stopStatus(e.budget), ctl.stopWhy + "; " + commandEnd(e.reaped)
	case e.reaped.Signal != "":
		return report.StatusCrashed, commandEnd(e.reaped) + innerTrouble(e.inner) + lastOutput(e.output)
	}
	if bad := firstUnsuccessful(e.inner); bad != nil {
		return report.StatusFailed, describeInnerEnd(bad) + "; " + commandEnd(e.reaped)
	}
	if code := e.reaped.ExitCode; code != nil && *code != 0 {
		return report.StatusFailed, commandEnd(e.reaped) + lastOutput(e.output)
	}
	if e.engines != "" {
		return report.StatusFailed, e.engines
	}
	return report.StatusOK, ""
}

// commandEnd words how the command ended: "the command ended with exit
// status 1", "the command was killed by signal SIGABRT".
func commandEnd(r *reaperResult) string {
	if r.Signal != "" {
		return "the command was " + r.describe()
	}
	return "the command ended with " + r.describe()
}

// innerTrouble names the first TensorRT build that did not succeed, after
// the command's own end: "; TensorRT build 1 crashed: ...".
func innerTrouble(builds []report.TensorRTBuild) string {
	if bad := firstUnsuccessful(builds); bad != nil {
		return "; " + describeInnerEnd(bad)
	}
	return ""
}

func describeInnerEnd(b *report.TensorRTBuild) string {
	why := fmt.Sprintf("TensorRT build %d %s", b.Index, b.Status)
	if b.Reason != "" {
		why += ": " + b.Reason
	}
	return why
}

func firstUnsuccessful(builds []report.TensorRTBuild) *report.TensorRTBuild {
	for i := range builds {
		if builds[i].Status != report.StatusOK {
			return &builds[i]
		}
	}
	return nil
}

func lastOutput(line string) string {
	if line == "" {
		return ""
	}
	return fmt.Sprintf(" (last output: %s)", line)
}
