package baseline

import (
	"testing"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// A hit now is not judged (it would be 99% faster); a hit in the baseline
// counts with the time of the build that made its engine.
func TestCompareHits(t *testing.T) {
	th := DefaultRegression
	th.FailPercent = 25
	base := &report.Report{Builds: []report.Build{{Name: "a", Status: report.StatusOK, DurationMs: 60_000}, reporttest.CacheHit("b", 60_000)}}
	cur := &report.Report{Builds: []report.Build{reporttest.CacheHit("a", 60_000),
		{Name: "b", Status: report.StatusOK, DurationMs: 90_000}}}
	d := Compare(cur, base, th)
	if d[0].Verdict != VerdictSkipped || d[0].Note != "engine from the cache, not built" {
		t.Errorf("hit now: %+v, want skipped as cached", d[0])
	}
	if d[1].Verdict != VerdictFail || d[1].BaselineMs != 60_000 {
		t.Errorf("rebuilt after a baseline hit: %+v, want fail against the original 60000 ms", d[1])
	}
}
