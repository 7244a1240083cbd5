package report

import (
	"fmt"
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
