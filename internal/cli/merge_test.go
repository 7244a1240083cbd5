package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// fanoutCommand is a Command on buffers with an environment from env.
func fanoutCommand(env map[string]string) (*Command, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	c := &Command{
		Streams: &Streams{Out: &out, Err: &errb},
		Getenv:  func(k string) string { return env[k] },
	}
	return c, &out, &errb
}

func writeShard(t *testing.T, dir, name string, start time.Time, builds ...report.Build) string {
	t.Helper()
	p := filepath.Join(dir, name)
	r := &report.Report{Version: report.SchemaVersion, Tool: "trt-action test", Matrix: "trt-builds.yml",
		StartedAt: start, DurationMs: 2000, Complete: true, Builds: builds}
	if err := report.WriteJSON(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMergeCommandJoinsShards(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC)
	a := writeShard(t, dir, "a.json", t0, report.Build{Name: "x", Backend: "sim", Status: report.StatusOK, DurationMs: 1000})
	b := writeShard(t, dir, "b.json", t0.Add(time.Second),
		report.Build{Name: "y", Backend: "sim", Status: report.StatusOK, DurationMs: 1000},
		report.Build{Name: "z", Backend: "sim", Status: report.StatusBudgetExceeded, Reason: "too slow"})
	merged, summary, junit := filepath.Join(dir, "m.json"), filepath.Join(dir, "s.md"), filepath.Join(dir, "j.xml")

	c, _, errb := fanoutCommand(nil)
	code := c.Main([]string{"merge", "--report", merged, "--summary", summary, "--junit", junit, a, b})
	if code != ExitBudget {
		t.Fatalf("exit %d, want %d (a budget was exceeded)\n%s", code, ExitBudget, errb)
	}
	r, err := report.ReadJSON(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Builds) != 3 || r.DurationMs != 3000 || !r.Complete {
		t.Errorf("merged report: %d builds, %d ms, complete %v", len(r.Builds), r.DurationMs, r.Complete)
	}
	if md, _ := os.ReadFile(summary); !strings.Contains(string(md), "too slow") {
		t.Errorf("summary lacks the failed build's reason:\n%s", md)
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(data, &suites); err != nil || suites.Tests != 3 || suites.Failures != 1 {
		t.Errorf("junit: %+v %v", suites, err)
	}
}

func TestMergeCommandRefusesOverlap(t *testing.T) {
	dir := t.TempDir()
	a := writeShard(t, dir, "a.json", time.Now(), report.Build{Name: "x", Status: report.StatusOK})
	c, _, errb := fanoutCommand(nil)
	if code := c.Main([]string{"merge", "--report", filepath.Join(dir, "m.json"), a, a}); code != ExitInvalid {
		t.Errorf("exit %d, want %d", code, ExitInvalid)
	}
	if !strings.Contains(errb.String(), `build "x" is in report 1 and report 2`) {
		t.Errorf("stderr: %s", errb)
	}
	if code := c.Main([]string{"merge"}); code != ExitInvalid {
		t.Errorf("merge without reports: exit %d", code)
	}
}

// Issue 17 item 2, for merge: an output that is a shard report (or the
// baseline, or the matrix file) is refused before anything is written, and
// every one is named as what it is.
func TestMergeRefusesToWriteOverItsInputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	a := writeShard(t, dir, "a.json", time.Now(), report.Build{Name: "x", Backend: "sim", Status: report.StatusOK})
	b := writeShard(t, dir, "b.json", time.Now(), report.Build{Name: "y", Backend: "sim", Status: report.StatusOK})
	m := filepath.Join(dir, "m.yml")
	if err := os.WriteFile(m, []byte("version: 1\nbuilds:\n  - {name: x, backend: sim}\n  - {name: y, backend: sim}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, p := range []string{a, b, m} {
		before[p], _ = os.ReadFile(p)
	}
	c, _, errb := fanoutCommand(nil)
	code := c.Main([]string{"merge", "-f", "m.yml", "--report", "a.json", "--junit", "./b.json", "--summary", "m.yml", "--baseline", "b.json", "a.json", "b.json"})
	if code != ExitInvalid {
		t.Errorf("exit %d, want %d", code, ExitInvalid)
	}
	want := `trt-action: --report "a.json" is a shard report: the run would write over it; give the output a path of its own` + "\n" +
		`trt-action: --summary "m.yml" is the matrix file (-f): the run would write over it; give the output a path of its own` + "\n" +
		`trt-action: --junit "./b.json" is "b.json", a shard report: the run would write over it; give the output a path of its own` + "\n" +
		`trt-action: --junit "./b.json" is "b.json", the baseline report (--baseline): the run would write over it; give the output a path of its own` + "\n"
	if errb.String() != want {
		t.Errorf("merge printed\n%s\nwant\n%s", errb, want)
	}
	for p, data := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, data) {
			t.Errorf("%s was written", p)
		}
	}
}

func TestPlanGitHubMatrix(t *testing.T) {
	dir := t.TempDir()
	mfile := filepath.Join(dir, "trt-builds.yml")
	yml := "version: 1\nbuilds:\n" +
		"  - {name: a, backend: sim}\n  - {name: b, backend: sim}\n  - {name: c, backend: sim}\n"
	if err := os.WriteFile(mfile, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	base := writeShard(t, dir, "base.json", time.Now(),
		report.Build{Name: "a", Status: report.StatusOK, DurationMs: 90e3},
		report.Build{Name: "b", Status: report.StatusOK, DurationMs: 50e3},
		report.Build{Name: "c", Status: report.StatusOK, DurationMs: 40e3})
	outputs := filepath.Join(dir, "gh-output")
	c, out, errb := fanoutCommand(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": outputs})
	_, builds, err := loadBuilds(mfile, nil, "", withoutInputs)
	if err != nil {
		t.Fatal(err)
	}
	if handled, err := c.printShardPlan(shardFlags{}, builds); handled || err != nil {
		t.Fatalf("without --github-matrix plan must go on as usual: %v %v", handled, err)
	}
	if handled, err := c.printShardPlan(shardFlags{githubMatrix: true, shards: 2, baseline: base}, builds); !handled || err != nil {
		t.Fatalf("handled %v, err %v: %s", handled, err, errb)
	}
	var got struct {
		Include []struct {
			Shard     int    `json:"shard"`
			Only      string `json:"only"`
			EstimateS int64  `json:"estimate_s"`
		} `json:"include"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("stdout is not the matrix JSON: %v\n%s", err, out)
	}
	if len(got.Include) != 2 || got.Include[0].Only != "a" || got.Include[1].Only != "b,c" || got.Include[1].EstimateS != 90 {
		t.Errorf("plan = %+v", got.Include)
	}
	written, _ := os.ReadFile(outputs)
	if !strings.HasPrefix(string(written), "matrix<<") || !strings.Contains(string(written), `"only":"b,c"`) {
		t.Errorf("GITHUB_OUTPUT = %q", written)
	}
}

func TestMergeFailsWhenAShardIsMissingOrUnfinished(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC)
	matrixFile := filepath.Join(dir, "trt-builds.yml")
	if err := os.WriteFile(matrixFile, []byte("version: 1\ndefaults: {backend: sim}\nbuilds:\n  - name: b${{ matrix.n }}\n    matrix: {n: [1, 2, 3]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := writeShard(t, dir, "a.json", t0, report.Build{Name: "b1", Backend: "sim", Status: report.StatusOK, DurationMs: 1000})
	killed := writeShard(t, dir, "b.json", t0, report.Build{Name: "b2", Backend: "sim", Status: report.StatusRunning})

	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"an unfinished build fails the merge", []string{ok, killed}, ExitFailed},
		{"a build no shard reported fails the merge", []string{"-f", matrixFile, ok}, ExitFailed},
		{"fail-on never", []string{"--fail-on", "never", "-f", matrixFile, ok}, ExitOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			merged := filepath.Join(t.TempDir(), "m.json")
			cmd, _, errb := fanoutCommand(nil)
			if code := cmd.Main(append([]string{"merge", "--report", merged}, c.args...)); code != c.want {
				t.Fatalf("exit %d, want %d\n%s", code, c.want, errb)
			}
		})
	}
	merged := filepath.Join(dir, "m.json")
	cmd, _, _ := fanoutCommand(nil)
	cmd.Main([]string{"merge", "--report", merged, "-f", matrixFile, ok})
	r, err := report.ReadJSON(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Builds) != 3 || r.Complete {
		t.Fatalf("%d builds, complete %v; want b2 and b3 added as missing", len(r.Builds), r.Complete)
	}
	if b := r.Builds[2]; b.Status != report.StatusPending || !strings.HasPrefix(b.Reason, "missing:") {
		t.Errorf("%s: %s %q", b.Name, b.Status, b.Reason)
	}
}
