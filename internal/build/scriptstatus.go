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
// budget (and the run's, which newBudget adds) and the memory budgets,
// over every process of the command together. Phase and stall budgets
// apply inside each TensorRT build (innerBudgets).
func commandBudgets(b matrix.Budgets) matrix.Budgets {
	return matrix.Budgets{Build: b.Build, WarnPercent: b.WarnPercent, Grace: b.Grace, Memory: b.Memory, GPUMemory: b.GPUMemory}
}

// innerEnding is what one TensorRT build's status depends on.
type innerEnding struct {
	end    *hookMsg // its end message; nil when its process ended first
	gone   bool     // its process ended while it ran
	ctl    outcome  // what control did to the command
	budget string   // the kind of budget that stopped the command; "" for a signal or none
	// lastError is the newest error-severity TensorRT log line printed
	// while the build ran; "" if none (scriptoutput.go).
	lastError string
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
	}
	// The exception the bindings raised, else TensorRT's last error, as
	// a matrix build's reason is the worker's error, else the library's.
	return report.StatusFailed, failureReason(e.end.Error, e.lastError)
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
	reaped   *reaperResult // how the command ended; nil when the reaper said nothing
	exit     string        // how the reaper itself ended, when it said nothing
	ctl      outcome
	budget   string
	inner    []report.TensorRTBuild
	output   string // the command's last line, "" if none
	declared int    // how many engines the build declares (engine:)
	engines  string // what is wrong with the declared engine files, "" if nothing
	// oom words the kernel's OOM killer ending a process of the command
	// ("out of host memory (peak 31.2 GB of 32.0 GB)"); "" when it did not.
	oom string
}

// exitedZero reports whether the command ended by itself with exit status
// 0: no stop, kill or signal ended it. Only then do the declared engines
// decide anything (and need to be read).
func (e scriptEnding) exitedZero() bool {
	r := e.reaped
	return r != nil && r.StartError == "" && r.Signal == "" && r.ExitCode != nil && *r.ExitCode == 0 &&
		e.ctl.stopWhy == "" && e.ctl.killWhy == ""
}

// decideScriptStatus is the status and reason of a script build, and the
// warnings it carries. A command one of whose processes the kernel's OOM
// killer ended crashed, out of host memory, unless it went on and exited
// 0 (then it is judged as below, with a warning). A command a stop (a
// budget, a signal) reached ended
// by it, whatever its exit code. One that exited 0 after a TensorRT build
// inside it failed failed, unless it declares engines and wrote every one
// of them during the run: a program that falls back after a failed build
// (another precision, another profile) and then succeeds is ok, with a
// warning naming each TensorRT build that failed. Without declared engines
// nothing shows that the program recovered (many go on as if nothing
// happened), so it fails. One that exited 0 without declared engines in
// place failed.
func decideScriptStatus(e scriptEnding) (status, reason string, warnings []string) {
	ctl := e.ctl
	switch {
	case e.reaped == nil:
		return report.StatusCrashed, "the command's supervisor process (trt-action's reaper) ended without a status: " + e.exit, nil
	case e.reaped.StartError != "":
		return report.StatusFailed, "the command could not start: " + e.reaped.StartError, nil
	case ctl.killWhy != "" && ctl.graceKill && e.budget != "":
		return stopStatus(e.budget), ctl.stopWhy + "; " + ctl.killWhy, nil
	case ctl.killWhy != "" && ctl.stopWhy != "":
		return report.StatusKilled, ctl.stopWhy + "; " + ctl.killWhy, nil
	case ctl.killWhy != "":
		return report.StatusKilled, ctl.killWhy, nil
	case e.oom != "" && ctl.stopWhy != "" && report.IsMemoryBudget(e.budget):
		return report.StatusBudgetExceeded, ctl.stopWhy + "; then the kernel's OOM killer ended it: " + e.oom + "; " + commandEnd(e.reaped), nil
	case e.oom != "" && !e.exitedZero():
		// A process of the command the kernel ended, and the command did
		// not recover: memory ended the build (budget-exceeded only when
		// a memory budget stopped it first).
		return report.StatusCrashed, e.oom + "; " + commandEnd(e.reaped) + innerTrouble(e.inner) + lastOutput(e.output), nil
	case ctl.stopWhy != "":
		return stopStatus(e.budget), ctl.stopWhy + "; " + commandEnd(e.reaped), nil
	case e.reaped.Signal != "":
		return report.StatusCrashed, commandEnd(e.reaped) + innerTrouble(e.inner) + lastOutput(e.output), nil
	}
	recovered := e.exitedZero() && e.declared > 0 && e.engines == ""
	if bad := firstUnsuccessful(e.inner); bad != nil && !recovered {
		return report.StatusFailed, describeInnerEnd(bad) + "; " + commandEnd(e.reaped), nil
	}
	if code := e.reaped.ExitCode; code != nil && *code != 0 {
		return report.StatusFailed, commandEnd(e.reaped) + lastOutput(e.output), nil
	}
	if e.engines != "" {
		return report.StatusFailed, e.engines, nil
	}
	return report.StatusOK, "", recoveredWarnings(e.inner)
}

// recoveredWarnings names each TensorRT build that did not succeed inside
// a script build that is ok all the same.
func recoveredWarnings(builds []report.TensorRTBuild) []string {
	var out []string
	for i := range builds {
		if builds[i].Status != report.StatusOK {
			out = append(out, describeInnerEnd(&builds[i])+"; the command went on, exited 0 and wrote every declared engine, so the build is ok")
		}
	}
	return out
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
