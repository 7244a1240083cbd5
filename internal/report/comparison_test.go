package report

import (
	"strings"
	"testing"
)

// The baseline comparison can fail the run: it comes right after the table
// of builds, before the sections on failed builds and the phase details,
// and it counts against the size limit.
func TestSummaryPutsTheComparisonAfterTheTable(t *testing.T) {
	const comparison = "\n### Build times against the baseline\n\n| Build | Baseline |\n"
	got := Summary(sampleReport(), SummaryOptions{Comparison: comparison})
	at := strings.Index(got, comparison)
	lastRow := strings.LastIndex(got[:max(at, 0)], "\n| ")
	if at < 0 || lastRow < 0 || !strings.Contains(got[lastRow:at], "|") {
		t.Fatalf("the comparison must follow the table:\n%s", got)
	}
	for _, later := range []string{"\n### yolo", "\n### Phases", "\n### Timeline"} {
		if i := strings.Index(got, later); i >= 0 && i < at {
			t.Errorf("%q comes before the comparison:\n%s", later, got)
		}
	}
	full := len(Summary(sampleReport(), SummaryOptions{}))
	if small := Summary(sampleReport(), SummaryOptions{Comparison: comparison, MaxBytes: full}); len(small) > full {
		t.Errorf("with the comparison the summary is %d bytes, over its limit of %d", len(small), full)
	}
}
