package terminal

import (
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

func TestFinalTableSaysWhyTheRunEndedAndWhatRegressed(t *testing.T) {
	run := finalReport()
	run.Ended = "run budget 3s exceeded"
	run.Regressions = []report.Regression{{Name: "mnist", Percent: 41}}
	got := strings.Join(renderFinal(run, 120, false), "\n")
	for _, want := range []string{"ended: run budget 3s exceeded", "slower than the baseline allows: 1 regression (mnist +41%)"} {
		if !strings.Contains(got, want) {
			t.Errorf("final table lacks %q:\n%s", want, got)
		}
	}
}

// A hit is a success in the final table and says what it saved, counted
// from the run's start.
func TestFinalTableShowsAHit(t *testing.T) {
	run := finalReport()
	run.StartedAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	built := run.StartedAt.Add(-26 * time.Hour)
	run.Builds = append(run.Builds, report.Build{Name: "bert", Status: report.StatusCached, DurationMs: 60,
		Cache: &report.CacheUse{Hit: true, BuiltAt: built, BuildMs: 843_000}})
	got := renderFinal(run, 200, false)
	row := ""
	for _, l := range got {
		if strings.Contains(l, "bert") {
			row = l
		}
	}
	if !strings.HasPrefix(row, "✔ bert") || !strings.Contains(row, "cached: built 1 day ago in 14m3s") {
		t.Errorf("row of the hit: %q\n%s", row, strings.Join(got, "\n"))
	}
}

// A build its budget stopped and its grace then killed is over budget in
// the final table, with the reason that says it was killed.
func TestFinalTableShowsABuildKilledAfterItsBudgetsGraceAsOverBudget(t *testing.T) {
	const reason = "build budget exceeded after 1m0s (limit 1m0s); did not stop within its 30s grace, so it was killed"
	run := &report.Report{DurationMs: 91_000, Builds: []report.Build{
		{Name: "refit", Status: report.StatusBudgetExceeded, DurationMs: 91_000, Reason: reason},
	}}
	got := renderFinal(run, 300, false)
	if len(got) != 3 || !strings.HasPrefix(got[1], "✖ refit  budget-exceeded  1m31s") || !strings.HasSuffix(strings.TrimRight(got[1], " "), reason) ||
		got[2] != "1 build in 1m31s: 1 budget-exceeded" {
		t.Errorf("final table:\n%s", strings.Join(got, "\n"))
	}
}

// A --rebuild says in the final table that it replaced the cache entry
// (in the reason column, empty for an ok build); a plain store is not
// noted there. Before, nothing did.
func TestFinalTableOfARebuildGolden(t *testing.T) {
	got := frame(renderFinal(reporttest.Rebuilt(), 160, false))
	checkGolden(t, "render_final_rebuilt", got)
	if !strings.Contains(got, "rebuilt; cache entry replaced") || strings.Contains(got, "stored in the cache") {
		t.Errorf("final table:\n%s", got)
	}
}
