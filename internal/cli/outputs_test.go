package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
)

// Issue 13 item 15, for merge: an unwritable output stops it before it
// writes anything, and says so.
func TestMergeChecksItsOutputsFirst(t *testing.T) {
	dir := t.TempDir()
	shard := writeShard(t, dir, "a.json", time.Now(), report.Build{Name: "x", Backend: "sim", Status: report.StatusOK, DurationMs: 1000})
	folder := filepath.Join(dir, "merged.json")
	if err := os.MkdirAll(filepath.Join(folder, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "new", "j.xml")
	c, _, errb := fanoutCommand(nil)
	if code := c.Main([]string{"merge", "--report", folder, "--junit", junit, shard}); code != ExitOutput {
		t.Errorf("exit %d, want %d\n%s", code, ExitOutput, errb)
	}
	want := "trt-action: --report: " + folder + " is a folder; name a file in it\n" +
		"trt-action: 1 output could not be written (--report): nothing was merged\n"
	if errb.String() != want {
		t.Errorf("merge printed\n%s\nwant\n%s", errb, want)
	}
	if _, err := os.Stat(junit); !os.IsNotExist(err) {
		t.Errorf("the JUnit file was written (%v)", err)
	}
}

// Issue 13 items 14 and 19: an output that fails at the end costs no other
// output, and the last line gives the exit code it causes.
func TestEveryOutputIsWrittenThatCanBe(t *testing.T) {
	dir := t.TempDir()
	outputFile := filepath.Join(dir, "github_output")
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": outputFile}
	c, _, errb := fanoutCommand(env)
	reportPath, summary, junit := filepath.Join(dir, "r.json"), filepath.Join(dir, "s.md"), filepath.Join(dir, "j.xml")
	o, err := c.newOutputs(outputs.Paths{Report: reportPath, Summary: summary, JUnit: junit})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Check("no build was started"); err != nil {
		t.Fatal(err)
	}
	// The disk changes under the run: the report's path becomes a folder.
	if err := os.MkdirAll(filepath.Join(reportPath, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &report.Report{Version: report.SchemaVersion, Complete: true,
		Builds: []report.Build{{Name: "x", Backend: "sim", Status: report.StatusOK}}}
	o.Checkpoint(r)
	code := c.end(runEnd{outputs: o.Final(r)})
	if code != ExitOutput {
		t.Errorf("exit %d, want %d", code, ExitOutput)
	}
	for _, p := range []string{summary, junit, outputFile} {
		if info, err := os.Stat(p); err != nil || info.Size() == 0 {
			t.Errorf("%s was not written: %v", filepath.Base(p), err)
		}
	}
	text := errb.String()
	if !strings.Contains(text, "trt-action: --report: "+reportPath+" is a folder") ||
		!strings.Contains(text, "trt-action: 1 output could not be written (--report): exit 4\n") {
		t.Errorf("output failures not told:\n%s", text)
	}
}

// A signal's exit code stands; output failures are still printed.
func TestARunsEndKeepsASignalsExitCode(t *testing.T) {
	c, _, errb := fanoutCommand(nil)
	junit := t.TempDir() // a folder: the JUnit file cannot be written
	err := outputs.New(c.actions(), outputs.Paths{Report: filepath.Join(junit, "r.json"), JUnit: junit}).Check("")
	if code := c.end(runEnd{outcome: interrupted{report.SignalInterrupt}, outputs: err}); code != ExitInterrupted {
		t.Errorf("exit %d after SIGINT, want %d", code, ExitInterrupted)
	}
	if !strings.HasSuffix(errb.String(), "(--junit): exit 130\n") {
		t.Errorf("last line does not give exit 130:\n%s", errb)
	}
	errb.Reset()
	if code := c.end(runEnd{outcome: buildsFailed}); code != ExitFailed || errb.Len() != 0 {
		t.Errorf("exit %d without output failures, printing %q; want %d and nothing (the headline said it)", code, errb, ExitFailed)
	}
}

// Issue 18 point 5: --events was opened with os.Create, which empties the
// old file in place (and blocks for ever on a FIFO nobody reads); now
// through atomicfile.Live.
func TestTheEventsFileIsANewFile(t *testing.T) {
	dir := t.TempDir()
	path, old := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "last-run.jsonl")
	if err := os.WriteFile(path, []byte("{\"v\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, old); err != nil {
		t.Fatal(err)
	}
	c, _, _ := fanoutCommand(nil)
	views, _, err := c.views(buildFlags{events: path, depth: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := views.Close(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(old); string(data) != "{\"v\":1}\n" {
		t.Errorf("the old events file was truncated in place: it holds %q", data)
	}
}
