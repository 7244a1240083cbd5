package cli

import (
	"testing"

	"github.com/trt-action/trt-action/internal/report"
)

// judge decides from the report alone, for build and merge alike: every
// status under every --fail-on, in a run no signal stopped and in one
// SIGINT or SIGTERM stopped (the report's Signal, which a merge of an
// interrupted shard's report carries). A cancelled build of a run no
// signal stopped is the run budget's: a budget.
func TestJudgeOverStatusesInterruptionAndFailOn(t *testing.T) {
	// Exit codes with no signal, by --fail-on: failure, budget, never.
	byStatus := map[string][3]int{
		report.StatusOK:             {ExitOK, ExitOK, ExitOK},
		report.StatusCached:         {ExitOK, ExitOK, ExitOK},
		report.StatusFailed:         {ExitFailed, ExitFailed, ExitOK},
		report.StatusCrashed:        {ExitFailed, ExitFailed, ExitOK},
		report.StatusKilled:         {ExitFailed, ExitFailed, ExitOK},
		report.StatusPending:        {ExitFailed, ExitFailed, ExitOK},
		report.StatusRunning:        {ExitFailed, ExitFailed, ExitOK},
		report.StatusBudgetExceeded: {ExitOK, ExitBudget, ExitOK},
		report.StatusCancelled:      {ExitOK, ExitBudget, ExitOK},
	}
	failOns := []string{failOnFailure, failOnBudget, failOnNever}
	for status, codes := range byStatus {
		for i, failOn := range failOns {
			for _, signal := range []string{"", report.SignalInterrupt, report.SignalTerminate} {
				r := &report.Report{Signal: signal, Builds: []report.Build{{Status: report.StatusOK}, {Status: status}}}
				want := codes[i]
				switch signal {
				case report.SignalInterrupt:
					want = ExitInterrupted
				case report.SignalTerminate:
					want = ExitTerminated
				}
				if got := exitCode(judge(r, failOn)); got != want {
					t.Errorf("a %s build, signal %q, --fail-on %s: exit %d, want %d", status, signal, failOn, got, want)
				}
			}
		}
	}
	for i, failOn := range failOns {
		regressed := &report.Report{Regressions: []report.Regression{{Name: "a", Percent: 40}}, Builds: []report.Build{{Status: report.StatusOK}}}
		if got, want := exitCode(judge(regressed, failOn)), [3]int{ExitOK, ExitBudget, ExitOK}[i]; got != want {
			t.Errorf("a regression, --fail-on %s: exit %d, want %d", failOn, got, want)
		}
	}
	// The words alone are what people read; the exit code is the Signal's.
	worded := &report.Report{Interrupted: "SIGTERM after 3s", Builds: []report.Build{{Status: report.StatusOK}}}
	if got := exitCode(judge(worded, failOnBudget)); got != ExitOK {
		t.Errorf("words without a Signal: exit %d, want %d", got, ExitOK)
	}
}
