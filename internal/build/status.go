package build

import (
	"fmt"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/native"
)

// ending is everything a build's status depends on, gathered once the
// worker has exited and its messages are read.
type ending struct {
	result    *message // the worker's result; nil when it sent none
	ctl       outcome  // the soft stop and kill control made, if any
	budget    string   // the kind of budget that asked for the soft stop; "" for a signal or none
	exit      string   // how the worker process ended, for a crash
	lastError string   // the library's newest error log line, "" if none
	output    string   // the worker's last printed line, "" if none
	// oom words the kernel's OOM killer ending the worker ("out of host
	// memory (peak 31.2 GB of 32.0 GB)"); "" when it did not.
	oom string
}

// decideStatus is the status and reason of an ended build. It only
// decides: keeping or removing the engine is the caller's next step, and a
// kept engine that cannot be installed still turns "ok" into "failed".
// Reasons leave out the duration: every view shows it beside the status.
//
// A build one of its own budgets stopped (build, phase or stall) is
// budget-exceeded however it ended: at its next callback, or killed when
// its grace ran out first, which TensorRT's silent phases make the usual
// way (TensorRT-RTX reports nothing inside "Determining refit engines").
// Its reason then says so. The run budget is the run's, not the build's:
// a build it stops is cancelled, as are the builds it leaves unstarted,
// however little of it was left when the build started. A kill for
// anything else (a second SIGINT, or the grace of a signal's soft stop)
// leaves the build killed.
//
// A worker the kernel's OOM killer ended crashed, and its reason says so
// with the peak it reached; it is budget-exceeded only when a memory
// budget had stopped it first.
func decideStatus(e ending) (status, reason string) {
	res, ctl := e.result, e.ctl
	var st native.Status // the worker's, when it sent a result
	if res != nil {
		st = res.status()
	}
	stoppedBy := report.StatusCancelled // a signal, or the run budget
	if e.budget != "" && e.budget != kindRun {
		stoppedBy = report.StatusBudgetExceeded
	}
	switch {
	case res != nil && st == native.OK:
		// The engine was complete and synced before the result was sent;
		// a kill during the worker's teardown does not undo that.
		return report.StatusOK, ""
	case ctl.killWhy != "" && ctl.graceKill && e.budget != "":
		return stoppedBy, ctl.stopWhy + "; " + ctl.killWhy
	case ctl.killWhy != "" && ctl.stopWhy != "":
		return report.StatusKilled, ctl.stopWhy + "; " + ctl.killWhy
	case ctl.killWhy != "":
		return report.StatusKilled, ctl.killWhy
	case res != nil && ctl.stopWhy != "" && st != native.Unavailable:
		return stoppedBy, ctl.stopWhy
	case res != nil && st == native.Cancelled:
		return report.StatusCancelled, "the library stopped the build although nobody asked it to"
	case res != nil:
		return report.StatusFailed, failureReason(res.Error, e.lastError)
	case e.oom != "" && report.IsMemoryBudget(e.budget):
		return report.StatusBudgetExceeded, ctl.stopWhy + "; then the kernel's OOM killer ended it: " + e.oom
	case e.oom != "":
		return report.StatusCrashed, e.oom
	}
	crash := "worker crashed: " + e.exit
	if e.output != "" {
		crash += fmt.Sprintf(" (last output: %s)", e.output)
	}
	return report.StatusCrashed, crash
}

// failureReason prefers the worker's own error, then the library's newest
// error line.
func failureReason(workerErr, lastError string) string {
	switch {
	case workerErr != "":
		return workerErr
	case lastError != "":
		return lastError
	}
	return "the library returned no engine"
}
