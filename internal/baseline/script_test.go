package baseline

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// scriptRun is an export script that ran TensorRT builds of these times
// (ok) and took total; a negative time is a build that failed.
func scriptRun(total int64, inner ...int64) *report.Report {
	b := reporttest.YoloExport(0)
	b.Status, b.DurationMs = report.StatusOK, total
	b.TensorRTBuilds = nil
	for i, ms := range inner {
		t := report.TensorRTBuild{Index: i + 1, Status: report.StatusOK, DurationMs: ms}
		if ms < 0 {
			t.Status, t.DurationMs = report.StatusFailed, -ms
		}
		b.TensorRTBuilds = append(b.TensorRTBuilds, t)
	}
	return &report.Report{Complete: true, Builds: []report.Build{b}}
}

// A script build is judged by its whole time, then each of its TensorRT
// builds against the baseline's of the same index: slower ones warn or
// fail, one that failed now is not judged, one the baseline did not run
// (or that failed there) is new.
func TestCompareScriptBuildsByOrder(t *testing.T) {
	th := matrix.Regression{WarnPercent: 10, FailPercent: 25, Min: 30 * time.Second}
	base := scriptRun(200e3, 60e3, 60e3, 60e3, -60e3)
	cur := scriptRun(210e3, 90e3, 61e3, -60e3, 60e3, 60e3)
	got := Compare(cur, base, th)
	want := []struct {
		inner   int
		verdict string
	}{{0, VerdictOK}, {1, VerdictFail}, {2, VerdictOK}, {3, VerdictSkipped}, {4, VerdictNew}, {5, VerdictNew}}
	if len(got) != len(want) {
		t.Fatalf("%d deltas, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if d := got[i]; d.Name != "yolo-export" || d.Inner != w.inner || d.Verdict != w.verdict {
			t.Errorf("delta %d = %+v, want TensorRT build %d %s", i, d, w.inner, w.verdict)
		}
	}
	if got[1].Percent != 50 || got[1].BaselineMs != 60e3 {
		t.Errorf("TensorRT build 1: %+v, want +50%% against 60000 ms", got[1])
	}
	if got[3].Note != "TensorRT build did not succeed (failed)" {
		t.Errorf("a failed TensorRT build: note %q", got[3].Note)
	}
	// A script build new to the baseline: all of it is new.
	for _, d := range Compare(cur, &report.Report{}, th) {
		if d.Verdict != VerdictNew && d.Verdict != VerdictSkipped {
			t.Errorf("against an empty baseline: %+v", d)
		}
	}
}

// A TensorRT build that regressed fails the run as a build does, named by
// its script build and index, and has its row in the table.
func TestGateMarksRegressedTensorRTBuilds(t *testing.T) {
	th := matrix.Regression{WarnPercent: 10, FailPercent: 25, Min: time.Second}
	r := scriptRun(100e3, 60e3, 40e3)
	g := NewGate(scriptRun(100e3, 30e3, 40e3), &th)
	g.Mark(r)
	if want := []report.Regression{{Name: "yolo-export", Inner: 1, Percent: 100}}; !reflect.DeepEqual(r.Regressions, want) {
		t.Errorf("regressions %+v, want %+v", r.Regressions, want)
	}
	if got := report.Headline(r); !strings.Contains(got, "1 regression (yolo-export #1 +100%)") {
		t.Errorf("headline %q does not name the TensorRT build", got)
	}
	section := g.Section(r)
	for _, want := range []string{"| yolo-export \\#\u200b1 | 30s | 1m0s | +100.0% | ❌ fail |", "| yolo-export \\#\u200b2 | 40s | 40s | +0.0% | ok |", "| yolo-export | 1m40s | 1m40s | +0.0% | ok |"} {
		if !strings.Contains(section, want) {
			t.Errorf("section lacks %q:\n%s", want, section)
		}
	}
}
