// Package baseline compares a run's build times with a baseline report: the
// regression gate's verdict per build and the table that shows it.
package baseline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"

	"github.com/trt-action/trt-action/internal/text"
)

// Verdicts of the regression gate: the values of Delta.Verdict, exported as
// one set although only VerdictFail is read outside (cli's exit code).
const (
	VerdictOK      = "ok"
	VerdictWarn    = "warn"
	VerdictFail    = "fail"
	VerdictNew     = "new"     // no successful baseline to compare with
	VerdictSkipped = "skipped" // not judged: see Delta.Note
)

// Delta is one build's time compared with the baseline, or one TensorRT
// build's inside a script build.
type Delta struct {
	Name string `json:"name"`
	// Inner is the TensorRT build of script build Name this delta is of
	// (TensorRTBuild.Index, compared with the baseline's by that order);
	// 0 for the build's own time.
	Inner      int     `json:"tensorrt_build,omitempty"`
	BaselineMs int64   `json:"baseline_ms"` // 0 for new builds
	CurrentMs  int64   `json:"current_ms"`
	Percent    float64 `json:"percent"` // (current-baseline)/baseline*100; positive = slower
	Verdict    string  `json:"verdict"`
	Note       string  `json:"note,omitempty"` // why a build was not judged
}

// Compare judges every build of r against baseline with the thresholds th,
// in r's build order. Only builds built now and that succeeded in the
// baseline are compared: a failed or stopped build's time is not its build
// time, nor is a cache hit's. Builds
// shorter than th.Min in both reports are skipped, since a few seconds of
// noise would swing their percentages. A threshold of 0 is off. A build is
// judged warn or fail when it is slower by strictly more than the threshold.
// A script build is judged by its whole time, and after it each of its
// TensorRT builds by the same rules, against the baseline build's
// TensorRT build of the same index (the order in which they began).
func Compare(r, baseline *report.Report, th matrix.Regression) []Delta {
	base := map[string]*report.Build{}
	if baseline != nil {
		for i := range baseline.Builds {
			base[baseline.Builds[i].Name] = &baseline.Builds[i]
		}
	}
	deltas := make([]Delta, 0, len(r.Builds))
	for i := range r.Builds {
		b := &r.Builds[i]
		prev := base[b.Name]
		deltas = append(deltas, judge(b, prev, th))
		for j := range b.TensorRTBuilds {
			deltas = append(deltas, judgeInner(b.Name, &b.TensorRTBuilds[j], innerOf(prev, b.TensorRTBuilds[j].Index), th))
		}
	}
	return deltas
}

// innerOf is TensorRT build k of the baseline's build, nil when it has none.
func innerOf(b *report.Build, k int) *report.TensorRTBuild {
	if b == nil {
		return nil
	}
	for i := range b.TensorRTBuilds {
		if b.TensorRTBuilds[i].Index == k {
			return &b.TensorRTBuilds[i]
		}
	}
	return nil
}

// judgeInner judges TensorRT build cur of script build name against the
// baseline's TensorRT build of the same index (nil when there is none),
// as judge does a build.
func judgeInner(name string, cur, prev *report.TensorRTBuild, th matrix.Regression) Delta {
	d := Delta{Name: name, Inner: cur.Index, CurrentMs: cur.DurationMs}
	switch {
	case !report.Succeeded(cur.Status):
		d.Verdict, d.Note = VerdictSkipped, "TensorRT build did not succeed ("+cur.Status+")"
		return d
	case prev == nil || !report.Succeeded(prev.Status):
		d.Verdict = VerdictNew
		return d
	}
	return judgeTimes(d, prev.DurationMs, th)
}

// judge judges build cur against the baseline's build of its name (nil
// when there is none).
func judge(cur, prev *report.Build, th matrix.Regression) Delta {
	d := Delta{Name: cur.Name, CurrentMs: cur.DurationMs}
	var prevMs int64
	prevKnown := false
	if prev != nil {
		// A baseline hit counts with the time of the build that made its engine.
		prevMs, prevKnown = report.BuildTime(prev)
	}
	switch {
	case cur.Status == report.StatusCached:
		// Taking an engine from the cache measures no build: judged, it
		// would read as a build 99% faster than its baseline.
		d.Verdict, d.Note = VerdictSkipped, "engine from the cache, not built"
		return d
	case cur.Status != report.StatusOK:
		d.Verdict, d.Note = VerdictSkipped, "build did not succeed ("+cur.Status+")"
		return d
	case !prevKnown:
		d.Verdict = VerdictNew
		return d
	}
	return judgeTimes(d, prevMs, th)
}

// judgeTimes judges d, whose time now is set, against its baseline time
// prevMs: skipped when both are under th.Min or the baseline took no
// time, else by how much slower it got.
func judgeTimes(d Delta, prevMs int64, th matrix.Regression) Delta {
	d.BaselineMs = prevMs
	minMs := th.Min.Milliseconds()
	switch {
	case d.CurrentMs < minMs && prevMs < minMs:
		d.Verdict, d.Note = VerdictSkipped, "shorter than "+th.Min.String()+" in both runs"
		return d
	case prevMs <= 0:
		d.Verdict, d.Note = VerdictSkipped, "baseline took no measurable time"
		return d
	}
	d.Percent = float64(d.CurrentMs-prevMs) / float64(prevMs) * 100
	switch {
	case th.FailPercent > 0 && d.Percent > th.FailPercent:
		d.Verdict = VerdictFail
	case th.WarnPercent > 0 && d.Percent > th.WarnPercent:
		d.Verdict = VerdictWarn
	default:
		d.Verdict = VerdictOK
	}
	return d
}

// Label names what the delta is of: the build, or a TensorRT build inside
// it ("yolo-export #2").
func (d Delta) Label() string {
	if d.Inner > 0 {
		return report.InnerLabel(d.Name, d.Inner)
	}
	return d.Name
}

// DefaultRegression applies when the matrix file has no regression block but
// a baseline is given: report deltas, fail nothing.
var DefaultRegression = matrix.Regression{WarnPercent: 10, Min: 30 * time.Second}

// maxDeltaRows bounds the rows of DeltaTable.
const maxDeltaRows = 200

// DeltaTable renders deltas as a Markdown section for the job summary and
// the pull-request comment: the judged builds, worst first (at most
// maxDeltaRows), then a count of the builds that were new or not judged.
func DeltaTable(deltas []Delta, th matrix.Regression) string {
	var judged []Delta
	unjudged := 0
	for _, d := range deltas {
		if d.Verdict == VerdictNew || d.Verdict == VerdictSkipped {
			unjudged++
			continue
		}
		judged = append(judged, d)
	}
	sort.SliceStable(judged, func(i, j int) bool { return judged[i].Percent > judged[j].Percent })
	// The slowest-growing builds first; the table must leave the job
	// summary room under its 1 MiB.
	hidden := max(len(judged)-maxDeltaRows, 0)
	judged = judged[:len(judged)-hidden]

	var sb strings.Builder
	fmt.Fprintf(&sb, "### Build times against the baseline\n\n")
	fmt.Fprintf(&sb, "Thresholds: %s.\n\n", thresholds(th))
	if len(judged) > 0 {
		sb.WriteString("| Build | Baseline | Now | Change | Verdict |\n|---|---:|---:|---:|---|\n")
		for _, d := range judged {
			fmt.Fprintf(&sb, "| %s | %s | %s | %+.1f%% | %s |\n", text.Markdown(d.Label()), text.PreciseMs(d.BaselineMs), text.PreciseMs(d.CurrentMs), d.Percent, verdictLabel[d.Verdict])
		}
		sb.WriteString("\n")
	}
	if hidden > 0 {
		fmt.Fprintf(&sb, "… and %d more builds that changed less; the JSON report has every time.\n\n", hidden)
	}
	if unjudged > 0 {
		noun := "builds were"
		if unjudged == 1 {
			noun = "build was"
		}
		fmt.Fprintf(&sb, "%d %s not judged (new, failed, cached, or shorter than the minimum).\n", unjudged, noun)
	}
	return sb.String()
}

var verdictLabel = map[string]string{VerdictOK: "ok", VerdictWarn: "⚠️ warn", VerdictFail: "❌ fail"}

func thresholds(th matrix.Regression) string {
	var parts []string
	if th.WarnPercent > 0 {
		parts = append(parts, fmt.Sprintf("warn over +%g%%", th.WarnPercent))
	}
	if th.FailPercent > 0 {
		parts = append(parts, fmt.Sprintf("fail over +%g%%", th.FailPercent))
	}
	if th.Min > 0 {
		parts = append(parts, "builds under "+th.Min.String()+" not judged")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
