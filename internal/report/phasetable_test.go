package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/golden"
)

// matrixReport is ten builds of the folding fixture, each a little slower,
// every third one failed.
func matrixReport(t *testing.T) *Report {
	t.Helper()
	in := readBuild(t, "fold-instances.json")
	r := &Report{Version: SchemaVersion, Tool: "trt-action 0.1.0", Matrix: "matrix.yaml",
		StartedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), Complete: true}
	for i := range 10 {
		b := Build{Name: fmt.Sprintf("resnet-b%d", 1<<i), Backend: "sim", Status: StatusOK,
			StartMs: int64(i) * 1100, DurationMs: in.DurationMs + int64(i)*100}
		if i%3 == 2 {
			b.Status, b.Reason = StatusFailed, "simulated failure"
		}
		scaled := scalePhases(in.Phases, 1+float64(i)/10)
		b.PhaseTree, b.SlowestPhases = FoldInstances(scaled, b.DurationMs, 3)
		r.Builds = append(r.Builds, b)
		r.DurationMs = b.StartMs + b.DurationMs
	}
	return r
}

func scalePhases(ps []*Phase, f float64) []*Phase {
	out := make([]*Phase, len(ps))
	for i, p := range ps {
		q := *p
		q.StartMs = int64(float64(p.StartMs) * f)
		if p.EndMs >= 0 {
			q.EndMs = int64(float64(p.EndMs) * f)
		}
		q.Children = scalePhases(p.Children, f)
		out[i] = &q
	}
	return out
}

func TestMatrixSummaryGolden(t *testing.T) {
	golden.Check(t, "summary-matrix.golden.md", Summary(matrixReport(t), SummaryOptions{TopPhases: 5}))
}

// A matrix gets one phase table, builds across (at most maxTableCols),
// ranked by self time, so a parent that only holds its children is not on
// top; builds that did not succeed are red (crit) in the timeline.
func TestMatrixSummaryIsOneTableBySelfTime(t *testing.T) {
	got := Summary(matrixReport(t), SummaryOptions{TopPhases: 5})
	if n := strings.Count(got, "### Phases"); n != 1 {
		t.Fatalf("%d phase sections, want one table for the matrix", n)
	}
	table := got[strings.Index(got, "### Phases by self time"):]
	header := strings.SplitN(table, "\n", 4)[2]
	if cols := strings.Count(header, "|") - 2; cols != maxTableCols {
		t.Errorf("%d build columns, want %d: %q", cols, maxTableCols, header)
	}
	first := strings.SplitN(table, "\n", 6)[4]
	if !strings.HasPrefix(first, "| … › Timing tactics › Evaluating tactic times › Measuring tactic time |") {
		t.Errorf("the phase with the most self time should lead, got %q", first)
	}
	if !strings.Contains(table, "1 more phase and 2 more builds in the JSON report._") {
		t.Errorf("no note of the builds and phases left out:\n%s", table)
	}
	if !strings.Contains(got, "section resnet-b4\n  Building engine :crit, ") || strings.Contains(got, "section resnet-b1\n  Building engine :crit") {
		t.Error("only the failed builds should be crit in the timeline")
	}
}
