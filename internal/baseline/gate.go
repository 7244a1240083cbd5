package baseline

import (
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// Gate is one run's regression gate: the baseline report its build times
// are compared with, and the thresholds they are judged by. Build and
// merge hold one each; without a baseline it judges nothing.
type Gate struct {
	Baseline   *report.Report // nil: no --baseline
	Thresholds matrix.Regression
}

// NewGate is the gate of a run with the baseline report base (nil for
// none) under the matrix file's regression block (nil when it has none,
// or no matrix file was read: DefaultRegression).
func NewGate(base *report.Report, thresholds *matrix.Regression) Gate {
	g := Gate{Baseline: base, Thresholds: DefaultRegression}
	if thresholds != nil {
		g.Thresholds = *thresholds
	}
	return g
}

// Mark records in r the builds (and TensorRT builds inside script builds)
// slower than the baseline by more than the fail threshold, and those
// whose peak memory grew by more than the memory threshold: they fail the
// run, and the headline names them.
func (g Gate) Mark(r *report.Report) {
	if g.Baseline == nil {
		return
	}
	r.Regressions = nil
	for _, d := range Compare(r, g.Baseline, g.Thresholds) {
		if d.Verdict == VerdictFail {
			r.Regressions = append(r.Regressions, report.Regression{Name: d.Name, Inner: d.Inner, Percent: d.Percent})
		}
	}
	for _, d := range CompareMemory(r, g.Baseline, g.Thresholds) {
		if d.Verdict == VerdictFail {
			r.Regressions = append(r.Regressions, report.Regression{Name: d.Name, Inner: d.Inner, Kind: d.Kind, Percent: d.Percent})
		}
	}
}

// Section is what the job summary and the comment show after their table
// when there is a baseline: every build's time against it (DeltaTable),
// then its peak memory where both runs have figures (MemoryTable).
func (g Gate) Section(r *report.Report) string {
	if g.Baseline == nil {
		return ""
	}
	section := "\n" + DeltaTable(Compare(r, g.Baseline, g.Thresholds), g.Thresholds)
	if memory := MemoryTable(CompareMemory(r, g.Baseline, g.Thresholds), g.Thresholds); memory != "" {
		section += "\n" + memory
	}
	return section
}
