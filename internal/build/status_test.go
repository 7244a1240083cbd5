package build

import (
	"testing"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/native"
)

// Every way a build can end, decided without a worker or cgo.
func TestDecideStatus(t *testing.T) {
	result := func(status native.Status, err string) *message { m := resultMessage(status, err); return &m }
	stopped := outcome{stopWhy: "interrupted by SIGINT"}
	budget := outcome{stopWhy: "build budget exceeded after 2s (limit 1s)"}
	killed := outcome{killWhy: "killed by a second SIGINT"}
	const grace = "did not stop within its 1s grace, so it was killed"
	graceKill := outcome{stopWhy: "interrupted by SIGINT", killWhy: grace, graceKill: true}
	budgetKill := outcome{stopWhy: budget.stopWhy, killWhy: grace, graceKill: true}
	stallKill := outcome{stopWhy: "stalled: no progress callback for 2s (stall limit 2s)", killWhy: grace, graceKill: true}
	secondSIGINT := outcome{stopWhy: budget.stopWhy, killWhy: "killed by a second SIGINT"}
	runStop := outcome{stopWhy: "run budget exhausted after 2m0s of this build (2m0s left when it started)"}
	runStopAtOnce := outcome{stopWhy: "run budget exhausted after 1ms of this build (1ms left when it started)"}
	runKill := outcome{stopWhy: runStop.stopWhy, killWhy: grace, graceKill: true}
	const oom = "out of host memory (peak 31.2 GB of 32.0 GB)"
	memoryStop := outcome{stopWhy: "memory budget exceeded: its processes held 8.7 GB (limit 8GiB)"}
	memoryKill := outcome{stopWhy: memoryStop.stopWhy, killWhy: "it went on to 9.9 GB, more than 10% over its budget, so it was killed at once", graceKill: true}
	tests := []struct {
		name         string
		e            ending
		status, want string
	}{
		{"ok", ending{result: result(native.OK, "")}, report.StatusOK, ""},
		{"ok although killed in teardown", ending{result: result(native.OK, ""), ctl: budgetKill, budget: kindBuild}, report.StatusOK, ""},
		{"killed", ending{ctl: killed, exit: "killed by signal SIGKILL"}, report.StatusKilled, "killed by a second SIGINT"},
		{"killed after a signal's soft stop", ending{ctl: graceKill}, report.StatusKilled, "interrupted by SIGINT; " + grace},
		{"killed after a budget's grace", ending{ctl: budgetKill, budget: kindBuild, exit: "killed by signal SIGKILL"}, report.StatusBudgetExceeded, budget.stopWhy + "; " + grace},
		{"killed after a stall budget's grace", ending{ctl: stallKill, budget: kindStall}, report.StatusBudgetExceeded, stallKill.stopWhy + "; " + grace},
		{"phase budget stop", ending{result: result(native.Cancelled, ""), ctl: budget, budget: kindPhase}, report.StatusBudgetExceeded, budget.stopWhy},
		{"run budget stop", ending{result: result(native.Cancelled, ""), ctl: runStop, budget: kindRun}, report.StatusCancelled, runStop.stopWhy},
		{"run budget stop, a millisecond after the build started", ending{result: result(native.Cancelled, ""), ctl: runStopAtOnce, budget: kindRun}, report.StatusCancelled, runStopAtOnce.stopWhy},
		{"run budget stop, killed after its grace", ending{ctl: runKill, budget: kindRun}, report.StatusCancelled, runStop.stopWhy + "; " + grace},
		{"budget stop, then a second SIGINT killed it", ending{ctl: secondSIGINT, budget: kindBuild}, report.StatusKilled, budget.stopWhy + "; killed by a second SIGINT"},
		{"killed with a result", ending{result: result(native.Failed, "x"), ctl: killed}, report.StatusKilled, "killed by a second SIGINT"},
		{"budget stop", ending{result: result(native.Cancelled, ""), ctl: budget, budget: kindBuild}, report.StatusBudgetExceeded, budget.stopWhy},
		{"budget stop, build failed on its way out", ending{result: result(native.Failed, "y"), ctl: budget, budget: kindBuild}, report.StatusBudgetExceeded, budget.stopWhy},
		{"signal stop", ending{result: result(native.Cancelled, ""), ctl: stopped}, report.StatusCancelled, stopped.stopWhy},
		{"stop, but library unavailable", ending{result: result(native.Unavailable, "no libnvinfer"), ctl: stopped}, report.StatusFailed, "no libnvinfer"},
		{"library cancelled on its own", ending{result: result(native.Cancelled, "")}, report.StatusCancelled, "the library stopped the build although nobody asked it to"},
		{"failed with the worker's error", ending{result: result(native.Failed, "parse error"), lastError: "older"}, report.StatusFailed, "parse error"},
		{"failed with the library's last error", ending{result: result(native.Failed, ""), lastError: "out of memory"}, report.StatusFailed, "out of memory"},
		{"failed without a word", ending{result: result(native.Failed, "")}, report.StatusFailed, "the library returned no engine"},
		{"a status this binary does not know is a failure", ending{result: result(native.Status(7), "odd")}, report.StatusFailed, "odd"},
		{"a result naming no status is a failure", ending{result: &message{M: msgResult, Error: "damaged"}}, report.StatusFailed, "damaged"},
		{"crashed", ending{exit: "killed by signal SIGSEGV", output: "Segmentation fault"}, report.StatusCrashed, "worker crashed: killed by signal SIGSEGV (last output: Segmentation fault)"},
		{"crashed silently", ending{exit: "exit status 2"}, report.StatusCrashed, "worker crashed: exit status 2"},
		{"crashed while stopping", ending{ctl: stopped, exit: "exit status 1"}, report.StatusCrashed, "worker crashed: exit status 1"},
		// The kernel's OOM killer: crashed, named; budget-exceeded only
		// after a memory budget's stop.
		{"out of memory", ending{exit: "killed by signal SIGKILL", oom: oom}, report.StatusCrashed, oom},
		{"out of memory during a time budget's stop", ending{ctl: budget, budget: kindBuild, exit: "killed by signal SIGKILL", oom: oom}, report.StatusCrashed, oom},
		{"out of memory after a memory budget's stop", ending{ctl: memoryStop, budget: report.BudgetMemory, exit: "killed by signal SIGKILL", oom: oom},
			report.StatusBudgetExceeded, memoryStop.stopWhy + "; then the kernel's OOM killer ended it: " + oom},
		{"killed at once over a memory budget", ending{ctl: memoryKill, budget: report.BudgetMemory, exit: "killed by signal SIGKILL"},
			report.StatusBudgetExceeded, memoryStop.stopWhy + "; " + memoryKill.killWhy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, reason := decideStatus(tt.e)
			if status != tt.status || reason != tt.want {
				t.Errorf("got %s %q, want %s %q", status, reason, tt.status, tt.want)
			}
		})
	}
}
