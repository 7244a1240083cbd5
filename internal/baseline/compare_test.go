package baseline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

func TestCompareThresholds(t *testing.T) {
	th := matrix.Regression{WarnPercent: 10, FailPercent: 25, Min: 30 * time.Second}
	base := &report.Report{Builds: []report.Build{
		{Name: "steady", Status: report.StatusOK, DurationMs: 100e3},
		{Name: "warned", Status: report.StatusOK, DurationMs: 100e3},
		{Name: "edge", Status: report.StatusOK, DurationMs: 100e3},
		{Name: "failed", Status: report.StatusOK, DurationMs: 100e3},
		{Name: "faster", Status: report.StatusOK, DurationMs: 100e3},
		{Name: "tiny", Status: report.StatusOK, DurationMs: 5e3},
		{Name: "grew", Status: report.StatusOK, DurationMs: 5e3},
		{Name: "brokebefore", Status: report.StatusFailed, DurationMs: 100e3},
		{Name: "broken", Status: report.StatusOK, DurationMs: 100e3},
	}}
	cur := &report.Report{Builds: []report.Build{
		{Name: "steady", Status: report.StatusOK, DurationMs: 105e3},
		{Name: "warned", Status: report.StatusOK, DurationMs: 115e3},
		{Name: "edge", Status: report.StatusOK, DurationMs: 125e3},
		{Name: "failed", Status: report.StatusOK, DurationMs: 140e3},
		{Name: "faster", Status: report.StatusOK, DurationMs: 50e3},
		{Name: "tiny", Status: report.StatusOK, DurationMs: 20e3},
		{Name: "grew", Status: report.StatusOK, DurationMs: 40e3},
		{Name: "brokebefore", Status: report.StatusOK, DurationMs: 100e3},
		{Name: "broken", Status: report.StatusBudgetExceeded, DurationMs: 300e3},
		{Name: "fresh", Status: report.StatusOK, DurationMs: 100e3},
	}}
	want := map[string]string{
		"steady": VerdictOK, "warned": VerdictWarn, "edge": VerdictWarn, "failed": VerdictFail,
		"faster": VerdictOK, "tiny": VerdictSkipped, "grew": VerdictFail,
		"brokebefore": VerdictNew, "broken": VerdictSkipped, "fresh": VerdictNew,
	}
	deltas := Compare(cur, base, th)
	if len(deltas) != len(cur.Builds) {
		t.Fatalf("got %d deltas", len(deltas))
	}
	for i, d := range deltas {
		if d.Name != cur.Builds[i].Name {
			t.Errorf("delta %d is %q, want report order", i, d.Name)
		}
		if d.Verdict != want[d.Name] {
			t.Errorf("%s: verdict %s (%.1f%%, note %q), want %s", d.Name, d.Verdict, d.Percent, d.Note, want[d.Name])
		}
	}
	if deltas[4].Percent != -50 || deltas[3].Percent != 40 {
		t.Errorf("percent faster=%v failed=%v", deltas[4].Percent, deltas[3].Percent)
	}
}

func TestCompareZeroThresholdsNeverJudge(t *testing.T) {
	base := &report.Report{Builds: []report.Build{{Name: "a", Status: report.StatusOK, DurationMs: 1000}}}
	cur := &report.Report{Builds: []report.Build{{Name: "a", Status: report.StatusOK, DurationMs: 9000}}}
	if d := Compare(cur, base, matrix.Regression{}); d[0].Verdict != VerdictOK || d[0].Percent != 800 {
		t.Errorf("delta = %+v", d[0])
	}
	if d := Compare(cur, nil, matrix.Regression{}); d[0].Verdict != VerdictNew {
		t.Errorf("no baseline: %+v", d[0])
	}
}

func TestDeltaTable(t *testing.T) {
	th := matrix.Regression{WarnPercent: 10, FailPercent: 25, Min: 30 * time.Second}
	deltas := []Delta{
		{Name: "ok_one", BaselineMs: 100e3, CurrentMs: 101e3, Percent: 1, Verdict: VerdictOK},
		{Name: "x-@team", BaselineMs: 100e3, CurrentMs: 140e3, Percent: 40, Verdict: VerdictFail},
		{Name: "n", Verdict: VerdictNew},
	}
	got := DeltaTable(deltas, th)
	for _, want := range []string{
		"Thresholds: warn over +10%, fail over +25%, builds under 30s not judged.",
		"| x-@\u200bteam | 1m40s | 2m20s | +40.0% | ❌ fail |",
		"| ok\\_one | 1m40s | 1m41s | +1.0% | ok |",
		"1 build was not judged",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("DeltaTable lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "x-@\u200bteam") > strings.Index(got, "ok\\_one") {
		t.Errorf("worst build should come first:\n%s", got)
	}
}

func TestDeltaTableIsBounded(t *testing.T) {
	var deltas []Delta
	for i := range 5_000 {
		deltas = append(deltas, Delta{Name: fmt.Sprintf("build-%04d", i), BaselineMs: 60_000, CurrentMs: 60_000 + int64(i), Percent: float64(i) / 600, Verdict: VerdictOK})
	}
	table := DeltaTable(deltas, DefaultRegression)
	if rows := strings.Count(table, "\n| build-"); rows != maxDeltaRows {
		t.Errorf("%d rows, want %d", rows, maxDeltaRows)
	}
	if !strings.Contains(table, "| build-4999 |") || strings.Contains(table, "| build-0000 |") {
		t.Error("the table should keep the builds that slowed down most")
	}
	if !strings.Contains(table, "… and 4800 more builds") {
		t.Errorf("no note about the rows left out:\n%s", table[len(table)-300:])
	}
}
