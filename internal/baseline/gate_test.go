package baseline

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// The gate marks in the report the builds over the fail threshold (and
// only those; a mark from before is replaced), shows every build in its
// section, and does nothing without a baseline. Without a regression
// block the default thresholds fail nothing.
func TestGateMarksRegressionsAndShowsTheComparison(t *testing.T) {
	base := &report.Report{Builds: []report.Build{
		{Name: "slower", Status: report.StatusOK, DurationMs: 100e3},
		{Name: "steady", Status: report.StatusOK, DurationMs: 100e3},
	}}
	run := func() *report.Report {
		return &report.Report{Regressions: []report.Regression{{Name: "stale", Percent: 99}}, Builds: []report.Build{
			{Name: "slower", Status: report.StatusOK, DurationMs: 150e3},
			{Name: "steady", Status: report.StatusOK, DurationMs: 101e3},
		}}
	}
	th := matrix.Regression{WarnPercent: 10, FailPercent: 25, Min: time.Second}

	r := run()
	g := NewGate(base, &th)
	g.Mark(r)
	if want := []report.Regression{{Name: "slower", Percent: 50}}; !reflect.DeepEqual(r.Regressions, want) {
		t.Errorf("regressions %+v, want %+v", r.Regressions, want)
	}
	if s := g.Section(r); !strings.HasPrefix(s, "\n") || !strings.Contains(s, "slower") || !strings.Contains(s, "steady") {
		t.Errorf("section:\n%s", s)
	}

	r = run()
	NewGate(base, nil).Mark(r)
	if len(r.Regressions) != 0 {
		t.Errorf("default thresholds failed %+v; they fail nothing", r.Regressions)
	}

	r = run()
	none := NewGate(nil, &th)
	none.Mark(r)
	if len(r.Regressions) != 1 || r.Regressions[0].Name != "stale" || none.Section(r) != "" {
		t.Errorf("without a baseline the gate changed %+v or showed %q", r.Regressions, none.Section(r))
	}
}
