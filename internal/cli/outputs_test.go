package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// Issue 13 items 14 and 19, for merge: a report that cannot be written
// costs no other output, and the last line gives the exit code it causes.
func TestMergeWritesEveryOutputItCanAndNamesEveryOneItCannot(t *testing.T) {
	dir := t.TempDir()
	shard := writeShard(t, dir, "a.json", time.Now(), report.Build{Name: "x", Backend: "sim", Status: report.StatusOK, DurationMs: 1000})
	folder := filepath.Join(dir, "merged.json")
	if err := os.MkdirAll(filepath.Join(folder, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	junit, summary := filepath.Join(dir, "j.xml"), filepath.Join(dir, "s.md")
	c, _, errb := fanoutCommand(nil)
	code := c.Main([]string{"merge", "--report", folder, "--summary", summary, "--junit", junit, shard})
	if code != ExitOutput {
		t.Errorf("exit %d, want %d\n%s", code, ExitOutput, errb)
	}
	for _, p := range []string{junit, summary} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was not written: %v", filepath.Base(p), err)
		}
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if !strings.Contains(errb.String(), "trt-action: --report: "+folder+" is a folder") {
		t.Errorf("the report's failure is not named:\n%s", errb)
	}
	if last, want := lines[len(lines)-1], "trt-action: 1 output could not be written (--report): exit 4"; last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
}

// A write that fails and later succeeds leaves the file right: only the
// latest outcome of each output counts.
func TestOutputsKeepTheLatestOutcomeOfEachOutput(t *testing.T) {
	var o outputs
	full := errors.New("no space left on device")
	o.record("--report", full)
	o.record("--summary", full)
	o.record("--report", nil)
	o.record("--junit", full)
	var names []string
	for _, f := range o.failed {
		names = append(names, f.output)
	}
	if got := strings.Join(names, ","); got != "--summary,--junit" {
		t.Errorf("failed outputs %s, want --summary,--junit", got)
	}
}

// A signal's exit code stands; output failures are still printed.
func TestEndRunKeepsASignalsExitCode(t *testing.T) {
	c, _, errb := fanoutCommand(nil)
	err := outputError{fails: []outputFailure{{"--junit", errors.New("j.xml is a folder")}}}
	if code := c.endRun(ExitInterrupted, err); code != ExitInterrupted {
		t.Errorf("exit %d after SIGINT, want %d", code, ExitInterrupted)
	}
	if !strings.HasSuffix(errb.String(), "(--junit): exit 130\n") {
		t.Errorf("last line does not give exit 130:\n%s", errb)
	}
	if code := c.endRun(ExitFailed, nil); code != ExitFailed {
		t.Errorf("exit %d without output failures, want %d", code, ExitFailed)
	}
}
