package terminal

import (
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/report"
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
