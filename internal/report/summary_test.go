package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/golden"
)

func TestSummaryGolden(t *testing.T) {
	golden.Check(t, "summary.golden.md", Summary(sampleReport(), SummaryOptions{}))
}

func TestHeadline(t *testing.T) {
	r := sampleReport()
	ok := &Report{Complete: true, DurationMs: 42_300, Builds: []Build{okBuild("a", 0, 1), okBuild("b", 0, 1)}}
	interrupted := sampleReport()
	interrupted.Complete, interrupted.Interrupted = false, "SIGINT after 3m12s"
	interrupted.Builds = append(interrupted.Builds, Build{Status: StatusPending}, Build{Status: StatusRunning})
	running := sampleReport()
	running.Complete = false
	for _, c := range []struct {
		r    *Report
		want string
	}{
		{ok, "✅ 2 of 2 builds ok in 42.3s"},
		{r, "❌ 1 failed, 1 over budget, 1 ok — 3 builds in 41.5s"},
		{interrupted, "⏹ interrupted (SIGINT after 3m12s): 3 of 5 builds done — 1 failed, 1 over budget, 1 ok"},
		{running, "⏳ running: 3 of 3 builds done after 41.5s"},
		{&Report{Complete: true}, "⚪ no builds ran"},
	} {
		if got := Headline(c.r); got != c.want {
			t.Errorf("Headline = %q, want %q", got, c.want)
		}
	}
}

// gantt returns the lines of the summary's Mermaid block.
func gantt(t *testing.T, summary string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(summary, "```mermaid\n")
	if !ok {
		t.Fatal("no mermaid block")
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("mermaid block not closed")
	}
	return strings.Split(strings.TrimSuffix(block, "\n"), "\n")
}

var ganttLine = regexp.MustCompile(`^(gantt|  dateFormat x|  axisFormat %s(\.%L)?|  section [^:;#%\x60\n]+|  [^:;#%\x60\n]+ :(crit, )?\d+, \d+)$`)

func TestSummaryEscapesUncontrolledText(t *testing.T) {
	r := sampleReport()
	r.Builds[0].Name = "evil | name\n<script>alert(1)</script> `code` [link](x)"
	r.Builds[0].Phases[0].Name = "section Evil: x; y # z %% c"
	r.Builds[1].Name = "title: x\n```"
	r.Builds[1].Phases[0].Children[0].Name = "click x call y()"
	got := Summary(r, SummaryOptions{})

	if strings.Contains(got, "<script>") {
		t.Error("raw HTML from a build name reached the summary")
	}
	for _, row := range buildRows(t, got) {
		if cells := splitCells(row); len(cells) != 6 {
			t.Errorf("row has %d cells, want 6: %q", len(cells), row)
		}
	}
	for _, l := range gantt(t, got) {
		if !ganttLine.MatchString(l) {
			t.Errorf("gantt line could break the chart: %q", l)
		}
		name := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "section"))
		for _, kw := range []string{"section ", "title ", "click "} {
			if strings.HasPrefix(strings.ToLower(name), kw) {
				t.Errorf("task named like a keyword: %q", l)
			}
		}
	}
}

func TestSummaryRowsHaveSixCells(t *testing.T) {
	r := sampleReport()
	r.Builds[0].Name = `a|b\|c\`
	r.Builds[1].Backend = `\\|`
	rows := buildRows(t, Summary(r, SummaryOptions{}))
	if len(rows) != len(r.Builds) {
		t.Fatalf("%d rows for %d builds", len(rows), len(r.Builds))
	}
	for _, row := range rows {
		if cells := splitCells(row); len(cells) != 6 {
			t.Errorf("row has %d cells, want 6: %q", len(cells), row)
		}
	}
}

// buildRows returns the rows of the builds table.
func buildRows(t *testing.T, summary string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(summary, tableHeader)
	if !ok {
		t.Fatal("no builds table")
	}
	table, _, _ := strings.Cut(rest, "\n\n")
	return strings.Split(strings.TrimSuffix(table, "\n"), "\n")
}

func splitCells(row string) []string {
	var cells []string
	var cur strings.Builder
	backslashes := 0
	for _, r := range strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|") {
		if r == '|' && backslashes%2 == 0 {
			cells = append(cells, cur.String())
			cur.Reset()
			continue
		}
		if r == '\\' {
			backslashes++
		} else {
			backslashes = 0
		}
		cur.WriteRune(r)
	}
	return append(cells, cur.String())
}

// hugePhaseTree has 2,000 phase instances, shared by every build of the
// huge report so the test stays small in memory.
func hugePhaseTree() []*Phase {
	timing := &Phase{Name: "Timing tactics", StartMs: 1_000, EndMs: 59_000}
	for i := range 1_995 {
		timing.Children = append(timing.Children, &Phase{
			Name: "Evaluating tactic times", StartMs: 1_000 + int64(i)*29, EndMs: 1_000 + int64(i+1)*29,
		})
	}
	return []*Phase{{Name: "Building engine", StartMs: 0, EndMs: 60_000, Children: []*Phase{
		{Name: "Optimizing graph", StartMs: 0, EndMs: 1_000},
		{Name: "Computing profile costs", StartMs: 1_000, EndMs: 59_500, Children: []*Phase{timing}},
		{Name: "Determining refit engines", StartMs: 59_500, EndMs: 60_000},
	}}}
}

// hugeReport is 10,000 builds, each with the same 2,000-instance phase tree.
func hugeReport() *Report {
	phases := hugePhaseTree()
	r := &Report{Version: SchemaVersion, Complete: true, DurationMs: 3_600_000}
	for i := range 10_000 {
		status, reason := StatusOK, ""
		if i%10 == 0 {
			status, reason = StatusFailed, "parser error in node /model.22/Concat_"+fmt.Sprint(i)
		}
		r.Builds = append(r.Builds, Build{
			Name: fmt.Sprintf("yolov8m-%05d-640x640-fp16-bs8-opt5-sm86", i), Backend: "sim", Status: status, Reason: reason,
			DurationMs: 60_000, StartMs: int64(i) * 100, Phases: phases, BudgetUse: 50,
		})
	}
	return r
}

// BenchmarkSummary10k renders the job summary of 10,000 builds; it reports
// the summary's size (the limit is 1 MiB).
func BenchmarkSummary10k(b *testing.B) {
	r := hugeReport()
	size := 0
	for b.Loop() {
		size = len(Summary(r, SummaryOptions{}))
	}
	b.ReportMetric(float64(size), "summary-bytes")
}

func TestSummaryOfAHugeMatrixStaysUnderTheLimit(t *testing.T) {
	r := hugeReport()
	start := time.Now()
	got := Summary(r, SummaryOptions{})
	t.Logf("%d bytes in %v", len(got), time.Since(start))
	if len(got) > defaultSummaryBytes {
		t.Fatalf("summary is %d bytes, over %d", len(got), defaultSummaryBytes)
	}
	if !strings.Contains(got, tableHeader) {
		t.Error("table header missing")
	}
	note := regexp.MustCompile(`… and (\d+) more builds, see the JSON report`).FindStringSubmatch(got)
	if note == nil {
		t.Fatal("no note about the rows left out")
	}
	rows := strings.Count(got, "| sim |")
	if fmt.Sprint(10_000-rows) != note[1] {
		t.Errorf("%d rows shown and the note says %s more; want them to add up to 10000", rows, note[1])
	}
	if strings.Contains(got, "```mermaid") || strings.Contains(got, "<details>") {
		t.Error("timeline or details kept although the table had to be cut")
	}
	if !strings.HasSuffix(got, "\n") {
		t.Error("summary does not end with a newline")
	}
}

func TestSummaryDropsTimelineThenDetails(t *testing.T) {
	r := sampleReport()
	full := Summary(r, SummaryOptions{})
	timeline := strings.Index(full, "\n### Timeline")
	details := strings.Index(full, "\n### Phases")
	if timeline < 0 || details < 0 {
		t.Fatal("sample summary lacks details or timeline")
	}
	noTimeline := Summary(r, SummaryOptions{MaxBytes: timeline + noteRoom + 10})
	if strings.Contains(noTimeline, "```mermaid") || !strings.Contains(noTimeline, "### Phases by self time") {
		t.Errorf("with room for details only: timeline kept or details dropped:\n%s", noTimeline)
	}
	noDetails := Summary(r, SummaryOptions{MaxBytes: details + noteRoom + 10})
	if strings.Contains(noDetails, "### Phases by self time") || !strings.Contains(noDetails, "left out") {
		t.Errorf("with room for the table only: details kept or no note:\n%s", noDetails)
	}
	for _, max := range []int{len(full), timeline + noteRoom + 10, details + noteRoom + 10, 900, 200} {
		if got := Summary(r, SummaryOptions{MaxBytes: max}); len(got) > max {
			t.Errorf("MaxBytes %d: summary is %d bytes", max, len(got))
		}
	}
}

// A run of a few seconds labels its time axis with milliseconds: whole
// seconds would label every tick of a 1.2 s chart "0".
func TestTimelineAxisFitsTheRunsLength(t *testing.T) {
	long := Summary(sampleReport(), SummaryOptions{})
	if !strings.Contains(long, "\n  axisFormat %s\n") {
		t.Errorf("a run of %d ms: want whole seconds on the axis", sampleReport().DurationMs)
	}
	short := sampleReport()
	for i := range short.Builds {
		short.Builds[i].StartMs, short.Builds[i].DurationMs = 0, 1200
	}
	if got := Summary(short, SummaryOptions{}); !strings.Contains(got, "\n  axisFormat %s.%L\n") {
		t.Error("a run of 1.2 s: want milliseconds on the axis")
	}
}
