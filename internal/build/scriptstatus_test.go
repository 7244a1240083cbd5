package build

import (
	"slices"
	"testing"

	"github.com/trt-action/trt-action/internal/report"
)

// Every way a script build can end, decided without a command.
func TestDecideScriptStatus(t *testing.T) {
	exit := func(code int) *reaperResult { return &reaperResult{ExitCode: &code} }
	signal := &reaperResult{Signal: "SIGABRT"}
	ok := report.TensorRTBuild{Index: 1, Status: report.StatusOK}
	failed := report.TensorRTBuild{Index: 1, Status: report.StatusFailed, Reason: "TensorRT returned no engine"}
	failed2 := report.TensorRTBuild{Index: 2, Status: report.StatusFailed, Reason: "TensorRT returned no engine"}
	cancelled := report.TensorRTBuild{Index: 1, Status: report.StatusCancelled, Reason: "the program's own progress monitor cancelled the build"}
	okAfter := report.TensorRTBuild{Index: 3, Status: report.StatusOK}
	stop := outcome{stopWhy: "interrupted by SIGINT"}
	budget := outcome{stopWhy: "build budget exceeded after 2s (limit 1s)"}
	const grace = "did not stop within its 1s grace, so it was killed"
	budgetKill := outcome{stopWhy: budget.stopWhy, killWhy: grace, graceKill: true}
	const oom = "out of host memory (peak 31.2 GB of 32.0 GB)"
	memoryStop := outcome{stopWhy: "memory budget exceeded: its processes held 8.7 GB (limit 8GiB)"}
	crashedInner := report.TensorRTBuild{Index: 1, Status: report.StatusCrashed, Reason: "its process ended during the build"}
	const went = "; the command went on, exited 0 and wrote every declared engine, so the build is ok"
	tests := []struct {
		name         string
		e            scriptEnding
		status, want string
		warnings     []string
	}{
		{"ok", scriptEnding{reaped: exit(0), inner: []report.TensorRTBuild{ok}, declared: 1}, report.StatusOK, "", nil},
		{"ok without engines declared", scriptEnding{reaped: exit(0), inner: []report.TensorRTBuild{ok}}, report.StatusOK, "", nil},
		{"no reaper status", scriptEnding{exit: "exit status 2"}, report.StatusCrashed,
			"the command's supervisor process (trt-action's reaper) ended without a status: exit status 2", nil},
		{"could not start", scriptEnding{reaped: &reaperResult{StartError: "no such file"}}, report.StatusFailed, "the command could not start: no such file", nil},
		{"exit 1 after a good build", scriptEnding{reaped: exit(1), inner: []report.TensorRTBuild{ok}, declared: 1, output: "Traceback"},
			report.StatusFailed, "the command ended with exit status 1 (last output: Traceback)", nil},
		{"exit 0, engine not written", scriptEnding{reaped: exit(0), inner: []report.TensorRTBuild{ok}, declared: 1, engines: "engine a.engine was not written"},
			report.StatusFailed, "engine a.engine was not written", nil},
		// The program falls back after a failed build and writes every
		// declared engine: ok, each failed build named in a warning.
		{"fell back and wrote every engine", scriptEnding{reaped: exit(0), inner: []report.TensorRTBuild{failed, failed2, okAfter}, declared: 1},
			report.StatusOK, "", []string{"TensorRT build 1 failed: TensorRT returned no engine" + went, "TensorRT build 2 failed: TensorRT returned no engine" + went}},
		{"its own monitor cancelled, then it wrote every engine", scriptEnding{reaped: exit(0), inner: []report.TensorRTBuild{cancelled, okAfter}, declared: 2},
			report.StatusOK, "", []string{"TensorRT build 1 cancelled: the program's own progress monitor cancelled the build" + went}},
		// Every other outcome as before.
		{"failed build, exit 0, no engine declared", scriptEnding{reaped: exit(0), inner: []report.TensorRTBuild{failed, okAfter}},
			report.StatusFailed, "TensorRT build 1 failed: TensorRT returned no engine; the command ended with exit status 0", nil},
		{"failed build, exit 0, an engine missing", scriptEnding{reaped: exit(0), inner: []report.TensorRTBuild{failed}, declared: 1, engines: "engine a.engine was not written"},
			report.StatusFailed, "TensorRT build 1 failed: TensorRT returned no engine; the command ended with exit status 0", nil},
		{"failed build, exit 1, engines written", scriptEnding{reaped: exit(1), inner: []report.TensorRTBuild{failed, okAfter}, declared: 1},
			report.StatusFailed, "TensorRT build 1 failed: TensorRT returned no engine; the command ended with exit status 1", nil},
		{"failed build, killed by a signal", scriptEnding{reaped: signal, inner: []report.TensorRTBuild{failed}, declared: 1},
			report.StatusCrashed, "the command was killed by signal SIGABRT; TensorRT build 1 failed: TensorRT returned no engine", nil},
		{"stopped by a signal, exit 0, engines written", scriptEnding{reaped: exit(0), ctl: stop, inner: []report.TensorRTBuild{cancelled, okAfter}, declared: 1},
			report.StatusCancelled, "interrupted by SIGINT; the command ended with exit status 0", nil},
		{"stopped by a budget, exit 0", scriptEnding{reaped: exit(0), ctl: budget, budget: kindBuild, inner: []report.TensorRTBuild{failed}, declared: 1},
			report.StatusBudgetExceeded, budget.stopWhy + "; the command ended with exit status 0", nil},
		{"killed after a budget's grace", scriptEnding{reaped: &reaperResult{Signal: "SIGKILL", Killed: true}, ctl: budgetKill, budget: kindBuild, declared: 1},
			report.StatusBudgetExceeded, budget.stopWhy + "; " + grace, nil},
		// The kernel's OOM killer ended a process of the command.
		{"out of memory", scriptEnding{reaped: &reaperResult{Signal: "SIGKILL"}, oom: oom, output: "Killed"},
			report.StatusCrashed, oom + "; the command was killed by signal SIGKILL (last output: Killed)", nil},
		{"a child out of memory, exit 1", scriptEnding{reaped: exit(1), oom: oom, inner: []report.TensorRTBuild{crashedInner}},
			report.StatusCrashed, oom + "; the command ended with exit status 1; TensorRT build 1 crashed: its process ended during the build", nil},
		{"a child out of memory, the command recovered", scriptEnding{reaped: exit(0), oom: oom, inner: []report.TensorRTBuild{ok}, declared: 1},
			report.StatusOK, "", nil},
		{"out of memory after a memory budget's stop", scriptEnding{reaped: &reaperResult{Signal: "SIGKILL"}, ctl: memoryStop, budget: report.BudgetMemory, oom: oom},
			report.StatusBudgetExceeded, memoryStop.stopWhy + "; then the kernel's OOM killer ended it: " + oom + "; the command was killed by signal SIGKILL", nil},
		{"out of memory during a time budget's stop", scriptEnding{reaped: &reaperResult{Signal: "SIGKILL"}, ctl: budget, budget: kindBuild, oom: oom},
			report.StatusCrashed, oom + "; the command was killed by signal SIGKILL", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, reason, warnings := decideScriptStatus(tt.e)
			if status != tt.status || reason != tt.want || !slices.Equal(warnings, tt.warnings) {
				t.Errorf("got %s %q %q,\nwant %s %q %q", status, reason, warnings, tt.status, tt.want, tt.warnings)
			}
		})
	}
}

// Only a command that ended by itself with exit status 0 has its engines
// read before the status is decided.
func TestExitedZero(t *testing.T) {
	zero, one := 0, 1
	tests := []struct {
		name string
		e    scriptEnding
		want bool
	}{
		{"exit 0", scriptEnding{reaped: &reaperResult{ExitCode: &zero}}, true},
		{"exit 1", scriptEnding{reaped: &reaperResult{ExitCode: &one}}, false},
		{"no status", scriptEnding{}, false},
		{"a signal", scriptEnding{reaped: &reaperResult{Signal: "SIGSEGV"}}, false},
		{"exit 0 after a stop", scriptEnding{reaped: &reaperResult{ExitCode: &zero}, ctl: outcome{stopWhy: "interrupted by SIGINT"}}, false},
	}
	for _, tt := range tests {
		if got := tt.e.exitedZero(); got != tt.want {
			t.Errorf("%s: exitedZero = %v, want %v", tt.name, got, tt.want)
		}
	}
}
