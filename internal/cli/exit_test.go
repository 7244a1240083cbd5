package cli

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/trt-action/trt-action/internal/build"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// The exit code of an interrupted run comes from build.Run's typed cause,
// not from the words of report.Interrupted.
func TestExitForInterruptCause(t *testing.T) {
	failed := &report.Report{Builds: []report.Build{{Status: report.StatusFailed}}}
	// Words that once were parsed: without a cause they change nothing.
	worded := &report.Report{Interrupted: "SIGTERM after 3s", Builds: []report.Build{{Status: report.StatusOK}}}
	tests := []struct {
		name  string
		r     *report.Report
		cause error
		want  int
	}{
		{"SIGINT", failed, build.Interrupted{Signal: os.Interrupt}, ExitInterrupted},
		{"SIGTERM", failed, build.Interrupted{Signal: syscall.SIGTERM}, ExitTerminated},
		{"wrapped", failed, fmt.Errorf("run: %w", build.Interrupted{Signal: syscall.SIGTERM}), ExitTerminated},
		{"no cause", failed, nil, ExitFailed},
		{"words without a cause", worded, nil, ExitOK},
		{"signal over fail-on never", worded, build.Interrupted{Signal: os.Interrupt}, ExitInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failOn := failOnBudget
			if tt.name == "signal over fail-on never" {
				failOn = failOnNever
			}
			if got := exitCode(judge(tt.r, tt.cause, failOn)); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
		})
	}
}

// Annotations point at the builds' own positions, from the builds already
// loaded: the matrix file is not read again (here it does not even exist).
func TestMatrixLocatorUsesLoadedPositions(t *testing.T) {
	builds := []matrix.Build{
		{Name: "a", Pos: matrix.Pos{File: "gone/trt-matrix.yml", Line: 7, Column: 5}},
		{Name: "b"}, // no position known
	}
	locate := matrixLocator("gone/trt-matrix.yml", builds)
	if locate == nil {
		t.Fatal("no locator for a matrix that is not on disk")
	}
	for name, want := range map[string]int{"a": 7, "b": 1, "not-in-matrix": 1} {
		if file, line := locate(name); file != "gone/trt-matrix.yml" || line != want {
			t.Errorf("%s: %s:%d, want line %d", name, file, line, want)
		}
	}
	if matrixLocator("", builds) != nil {
		t.Error("a locator without a matrix file")
	}
}
