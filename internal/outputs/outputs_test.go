package outputs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// A write that fails and later succeeds leaves the file right: only the
// latest outcome of each output counts.
func TestOutputsKeepTheLatestOutcomeOfEachOutput(t *testing.T) {
	var o Outputs
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

// Each output says how it is written (runfiles.Output: replaced by a
// rename, runfiles.Appended: in place), and runfiles.Check lets a hard
// link of the first kind through: what an output says must be what its
// writer does. Every output starts as a second name (a hard link) of a
// file of its own; after the run's writes, that file is as it was for each
// output replaced by a rename, and changed for each written in place.
func TestEachOutputIsWrittenAsItsRoleSays(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": filepath.Join(dir, "github-output")}
	gha := actions.New(actions.Config{Getenv: func(k string) string { return env[k] }})
	o := New(gha, Paths{Report: filepath.Join(dir, "report.json"), Summary: filepath.Join(dir, "summary.md"),
		JUnit: filepath.Join(dir, "junit.xml"), Events: filepath.Join(dir, "events.jsonl")})
	const old = "a file of an earlier run\n"
	files := o.Files()
	if len(files) != 5 {
		t.Fatalf("%d outputs, want the report, summary, JUnit file, event stream and $GITHUB_OUTPUT: %+v", len(files), files)
	}
	for _, f := range files {
		if err := os.WriteFile(f.Path+".other-name", []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(f.Path+".other-name", f.Path); err != nil {
			t.Fatal(err)
		}
	}
	r := &report.Report{Builds: []report.Build{{Name: "a", Backend: "sim", Status: report.StatusOK}}}
	o.Checkpoint(r)
	events, err := atomicfile.Live(filepath.Join(dir, "events.jsonl")) // as the events view opens it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := events.Close(); err != nil {
		t.Fatal(err)
	}
	if err := o.Final(r); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		now, err := os.ReadFile(f.Path + ".other-name")
		if err != nil {
			t.Fatal(err)
		}
		if inPlace, changed := f.Role == runfiles.Appended, string(now) != old; inPlace != changed {
			t.Errorf("%s (role %d): its other name changed: %v, but the role says written in place: %v", f.What, f.Role, changed, inPlace)
		}
	}
}

// Issue 18 point 5: notes went to the summary with O_APPEND, in place; now
// through atomicfile, so another name of the file keeps what it had. A
// summary that is a stream (written once, and closed) gets nothing.
func TestAppendToSummaryReplacesTheSummaryWhole(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "summary.md"), filepath.Join(dir, "kept.md")
	if err := os.WriteFile(path, []byte("# Summary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, other); err != nil {
		t.Fatal(err)
	}
	gha := actions.New(actions.Config{Getenv: func(string) string { return "" }})
	o := New(gha, Paths{Report: filepath.Join(dir, "r.json"), Summary: path})
	if err := o.AppendToSummary("\n> [!NOTE]\n> no permission to comment\n"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(other); string(data) != "# Summary\n" {
		t.Errorf("the summary was written in place: its other name holds %q", data)
	}
	if data, _ := os.ReadFile(path); string(data) != "# Summary\n\n> [!NOTE]\n> no permission to comment\n" {
		t.Errorf("summary %q, want the old summary and the note", data)
	}
	stream := New(gha, Paths{Report: filepath.Join(dir, "r.json"), Summary: path})
	stream.streams[path] = true
	if err := stream.AppendToSummary("more"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); strings.HasSuffix(string(data), "more") {
		t.Error("a summary that is a stream was opened again")
	}
}

// The engines output names every engine a run kept: an ONNX build's under
// its name, a script build's first under its name and the rest numbered.
func TestTheEnginesOutputNamesEveryEngine(t *testing.T) {
	r := &report.Report{Builds: []report.Build{
		{Name: "onnx", Status: report.StatusOK, Engine: &report.Engine{Path: "out/a.engine"}},
		{Name: "script", Status: report.StatusOK, Engines: []report.Engine{{Path: "yolo.engine"}, {Path: "yolo-int8.engine"}}},
		{Name: "failed", Status: report.StatusFailed},
	}}
	want := `{"onnx":"out/a.engine","script":"yolo.engine","script#2":"yolo-int8.engine"}`
	if got := engineMap(r); got != want {
		t.Errorf("engines = %s, want %s", got, want)
	}
}
