package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
)

func TestScriptsSummaryGolden(t *testing.T) {
	golden.Check(t, "summary-scripts.golden.md", Summary(scriptsReport(), SummaryOptions{}))
}

// A build that ran a command has no builder settings: beside two matrix
// builds of the same settings it must not make every key look as if it
// differed (its row would be all "—").
func TestSettingsTableLeavesOutScriptBuilds(t *testing.T) {
	same := map[string]any{"opt-level": 3, "tf32": false}
	script := scriptsReport().Builds[1]
	builds := []Build{settingsBuild("a", same), settingsBuild("b", same), script}
	if got := settingsTable(builds); got != "" {
		t.Errorf("a script build made settings differ:\n%s", got)
	}
	other := settingsBuild("c", map[string]any{"opt-level": 5, "tf32": false})
	if got := settingsTable(append(builds, other)); !strings.Contains(got, "| opt-level |") || strings.Contains(got, script.Name) {
		t.Errorf("want opt-level, which differs, and no row for the script build:\n%s", got)
	}
}

// The summary's rows keep their six cells with a script build's extra
// words, and a summary of many script builds, each with many TensorRT
// builds, stays under its limit: rows of TensorRT builds capped, sections
// dropped whole with a note when they do not fit.
func TestScriptSectionsAreBounded(t *testing.T) {
	r := scriptsReport()
	yolo := r.Builds[1]
	for len(yolo.TensorRTBuilds) < 500 {
		t := yolo.TensorRTBuilds[len(yolo.TensorRTBuilds)%2]
		t.Index = len(yolo.TensorRTBuilds) + 1
		yolo.TensorRTBuilds = append(yolo.TensorRTBuilds, t)
	}
	for i := range 60 {
		b := yolo
		b.Name = fmt.Sprintf("export-%02d", i)
		r.Builds = append(r.Builds, b)
	}
	for _, row := range buildRows(t, Summary(r, SummaryOptions{})) {
		if cells := splitCells(row); len(cells) != 6 {
			t.Errorf("row has %d cells, want 6: %q", len(cells), row)
		}
	}
	full := Summary(r, SummaryOptions{})
	if n := strings.Count(full, "### TensorRT builds in"); n != maxScriptSections {
		t.Errorf("%d script sections, want %d", n, maxScriptSections)
	}
	if !strings.Contains(full, "… and 470 more TensorRT builds; see the JSON report.") {
		t.Error("no note of the TensorRT builds left out of a section")
	}
	if !strings.Contains(full, "The TensorRT builds of 43 more builds that ran a command are left out") {
		t.Errorf("no note of the script sections left out:\n%s", full[len(full)-3000:])
	}
	for _, limit := range []int{1_000_000, 65_536, 20_000, 5_000} {
		got := Summary(r, SummaryOptions{MaxBytes: limit})
		if len(got) > limit {
			t.Errorf("MaxBytes %d: summary is %d bytes", limit, len(got))
		}
		if limit == 65_536 && !strings.Contains(got, "### TensorRT builds in yolo-export") {
			t.Error("a comment-sized summary has no script section at all")
		}
	}
}

// A script build is one test case whose output lists the TensorRT builds
// inside (status, time, size, route), the command's end and its last lines
// of output; its failure body is an ONNX build's (budget, TensorRT errors).
func TestScriptsJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, scriptsReport()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "junit-scripts.golden.xml", buf.String())
	var got parsedSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	cases := got.Suites[0].Cases
	if len(cases) != 4 || got.Failures != 2 {
		t.Fatalf("%d test cases, %d failures; want 4 and 2 (one per build)", len(cases), got.Failures)
	}
	yolo := cases[1].SystemOut
	for _, want := range []string{
		"exit: exit status 1",
		"TensorRT build 1: ok in 18.0s · 12.3 MB · python route · pid 4711\n",
		"TensorRT build 2: budget-exceeded after 15.0s · python route · pid 4711: phase",
		"  TypeError: a bytes-like object is required, not 'NoneType'\n",
	} {
		if !strings.Contains(yolo, want) {
			t.Errorf("system-out lacks %q:\n%s", want, yolo)
		}
	}
	if f := cases[1].Failure; f == nil || !strings.Contains(f.Body, "phase budget: 10.4s of 10s in Building engine") {
		t.Errorf("failure = %+v, want the budget that ran out", f)
	}
	if !strings.Contains(cases[2].SystemOut, "engine: out/mnist.engine (1612804 bytes") || !strings.Contains(cases[2].SystemOut, "not observed: ") {
		t.Errorf("the unobserved script's case lacks its engine or why it was not observed:\n%s", cases[2].SystemOut)
	}
}

// A script build still running (a checkpoint's summary) has not ended:
// no exit yet, and no warning that no TensorRT build was seen.
func TestRunningScriptBuildIsNotWarnedAbout(t *testing.T) {
	r := scriptsReport()
	r.Complete = false
	b := &r.Builds[2]
	b.Status, b.Script.ExitCode, b.Script.Exit = StatusRunning, nil, ""
	got := Summary(r, SummaryOptions{})
	row := buildRows(t, got)[2]
	if strings.Contains(row, "no TensorRT build seen") || strings.Contains(row, "exit") {
		t.Errorf("running script build's row: %q", row)
	}
	if strings.Contains(got, "No TensorRT build was seen") || !strings.Contains(got, "No TensorRT build has begun yet.") {
		t.Errorf("running script build's section warns:\n%s", got)
	}
}

// chartTask is one bar of the summary's Mermaid timeline, in ms on the
// run's clock.
type chartTask struct {
	section, name string
	start, end    int64
}

var chartTaskLine = regexp.MustCompile(`^  (.+) :(?:crit, )?(\d+), (\d+)$`)

// chartTasks reads the bars of the summary's timeline.
func chartTasks(t *testing.T, summary string) []chartTask {
	t.Helper()
	var tasks []chartTask
	section := ""
	for _, l := range gantt(t, summary) {
		if name, ok := strings.CutPrefix(l, "  section "); ok {
			section = name
			continue
		}
		m := chartTaskLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		start, _ := strconv.ParseInt(m[2], 10, 64)
		end, _ := strconv.ParseInt(m[3], 10, 64)
		tasks = append(tasks, chartTask{section, m[1], start, end})
	}
	return tasks
}

// The timeline draws each build, and each TensorRT build inside a script
// build, when the report says it ran: every bar inside that build's span
// on the run's clock, and a phase that never finished ending with its
// build.
func TestTimelineDrawsEveryBuildWhenItRan(t *testing.T) {
	r := scriptsReport()
	type span struct {
		from, to int64
		root     *PhaseNode // the first root phase
	}
	spans := map[string]span{}
	for i := range r.Builds {
		b := &r.Builds[i]
		if tree := b.Folded(); len(tree) > 0 {
			spans[b.Name] = span{b.StartMs, b.StartMs + b.DurationMs, tree[0]}
		}
		for j := range b.TensorRTBuilds {
			in := &b.TensorRTBuilds[j]
			if tree := in.Folded(); len(tree) > 0 {
				from := b.StartMs + in.StartMs
				spans[fmt.Sprintf("%s (TensorRT build %d)", b.Name, in.Index)] = span{from, from + in.DurationMs, tree[0]}
			}
		}
	}
	tasks := chartTasks(t, Summary(r, SummaryOptions{}))
	drawn := map[string]bool{}
	for _, task := range tasks {
		s, ok := spans[task.section]
		if !ok {
			t.Errorf("a section the report has no build for: %q", task.section)
			continue
		}
		if task.start < s.from || task.end > s.to || task.start > task.end {
			t.Errorf("%s: %s drawn %d–%d ms, outside its build's %d–%d ms", task.section, task.name, task.start, task.end, s.from, s.to)
		}
		if task.name == s.root.Name && !drawn[task.section] {
			drawn[task.section] = true
			if s.root.LastEndMs < 0 && task.end != s.to {
				t.Errorf("%s: %s never finished, drawn ending at %d ms, want its build's end %d ms", task.section, task.name, task.end, s.to)
			}
		}
	}
	for name := range spans {
		if !drawn[name] {
			t.Errorf("no bars for %s", name)
		}
	}
}
