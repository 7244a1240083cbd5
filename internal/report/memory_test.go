package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// The summary of a run with memory figures: a peak memory column (GPU
// beside host where measured, an OOM kill named), the memory budget's
// use, the problems' reasons and budget, and each timeline section's
// peak.
func TestSummaryWithMemoryGolden(t *testing.T) {
	got := report.Summary(reporttest.Memory(), report.SummaryOptions{})
	golden.Check(t, "summary-memory.golden.md", got)
	for _, want := range []string{
		"| Build | Status | Backend | Time | Peak memory | Slowest phase | Budget used |",
		"| 31.2 GB · OOM-killed |",
		"| 1.8 GB · GPU 2.1 GB |",
		"Budget: memory reached 9.5 GB, over its 8GiB limit",
		"section resnet-fp16 (peak 1.8 GB)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	// A report without memory figures keeps the table it had.
	if plain := report.Summary(reporttest.Sample(), report.SummaryOptions{}); strings.Contains(plain, "Peak memory") {
		t.Error("a report without memory figures got a memory column")
	}
}

// JUnit gives each build's memory as properties, in bytes, only the
// figures measured; a memory budget's failure body names it.
func TestJUnitWithMemoryGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteJUnit(&buf, reporttest.Memory()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "junit-memory.golden.xml", buf.String())
	for _, want := range []string{
		`<property name="trt-action.memory.peak_host_bytes" value="31200000000"></property>`,
		`<property name="trt-action.memory.oom_kills" value="1"></property>`,
		"memory budget: 9.5 GB of 8GiB",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JUnit lacks %q", want)
		}
	}
}

func TestMemoryText(t *testing.T) {
	for _, c := range []struct {
		m    *report.Memory
		want string
	}{
		{nil, ""},
		{&report.Memory{NoCgroup: "none"}, ""},
		{&report.Memory{PeakHostBytes: 1_812_345_678}, "1.8 GB"},
		{&report.Memory{PeakHostBytes: 1_812_345_678, PeakGPUBytes: 2e9}, "1.8 GB · GPU 2.0 GB"},
		{&report.Memory{PeakGPUBytes: 2e9}, "GPU 2.0 GB"},
	} {
		if got := report.MemoryText(c.m); got != c.want {
			t.Errorf("MemoryText(%+v) = %q, want %q", c.m, got, c.want)
		}
	}
	if got := report.BudgetText(&report.BudgetHit{Kind: report.BudgetGPUMemory, LimitBytes: 20 << 30, PeakBytes: 22e9}); got != "GPU memory reached 22.0 GB, over its 20GiB limit" {
		t.Errorf("BudgetText = %q", got)
	}
	r := reporttest.Sample()
	r.Regressions = []report.Regression{{Name: "bert", Kind: report.RegressionMemory, Percent: 25}, {Name: "yolo", Percent: 30}}
	if got := report.RegressionsText(r); got != "2 regressions (bert memory +25%, yolo +30%)" {
		t.Errorf("RegressionsText = %q", got)
	}
}
