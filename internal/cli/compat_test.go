package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// v1Report is a report as version 1 wrote it: every phase instance under
// "phases", no folded tree.
const v1Report = `{
  "version": 1, "tool": "trt-action 0.1.0", "matrix": "trt-builds.yml",
  "started_at": "2025-05-01T08:00:00Z", "duration_ms": 2000, "complete": true,
  "builds": [{"name": "old", "backend": "sim", "status": "ok", "budget_use_pct": 0,
    "start_ms": 0, "duration_ms": 40000, "callbacks": 6, "longest_silence_ms": 10,
    "phases": [{"name": "Building engine", "start_ms": 0, "end_ms": 40000, "steps_done": 6, "steps": 6,
      "children": [
        {"name": "Timing tactics", "start_ms": 100, "end_ms": 20100, "steps_done": 3, "steps": 3},
        {"name": "Timing tactics", "start_ms": 20200, "end_ms": 39900, "steps_done": 3, "steps": 3}]}]}]
}
`

// An old report merges with a new one, and serves as a baseline: both
// read as the current version, the old tree folded.
func TestMergeAndBaselineReadVersion1Reports(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte(v1Report), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC)
	cur := writeShard(t, dir, "new.json", t0, report.Build{Name: "new", Backend: "sim", Status: report.StatusOK, DurationMs: 1000})
	merged, summary := filepath.Join(dir, "m.json"), filepath.Join(dir, "s.md")
	c, _, errb := fanoutCommand(nil)
	if code := c.Main([]string{"merge", "--report", merged, "--summary", summary, "--baseline", old, old, cur}); code != ExitOK {
		t.Fatalf("merge of a version 1 and a version %d report: exit %d\n%s", report.SchemaVersion, code, errb)
	}
	r, err := report.ReadJSON(merged)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != report.SchemaVersion || len(r.Builds) != 2 {
		t.Fatalf("merged: version %d, %d builds", r.Version, len(r.Builds))
	}
	tree := r.Builds[0].PhaseTree
	if len(tree) != 1 || len(tree[0].Children) != 1 || tree[0].Children[0].Count != 2 || tree[0].Children[0].TotalMs != 39700 {
		t.Errorf("the old build's tree was not folded: %+v", tree)
	}
	md, _ := os.ReadFile(summary)
	if !strings.Contains(string(md), "Timing tactics") || !strings.Contains(string(md), "against the baseline") {
		t.Errorf("summary lacks the old build's phases or the baseline comparison:\n%s", md)
	}
}

func TestReportDetailTakesFoldedOrFull(t *testing.T) {
	c, _, errb := fanoutCommand(nil)
	if code := c.Main([]string{"build", "--report-detail", "every"}); code != ExitInvalid {
		t.Fatalf("exit %d, want %d", code, ExitInvalid)
	}
	if !strings.Contains(errb.String(), `--report-detail: unknown value "every"; allowed: folded, full`) {
		t.Errorf("error: %s", errb)
	}
}
