package baseline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// VerdictNoted is a memory delta's verdict without a memory threshold
// (regression.memory): it grew, which is said, not judged.
const VerdictNoted = "noted"

// MemoryDelta is one build's peak memory (host or GPU) compared with the
// baseline's, or one TensorRT build's inside a script build.
type MemoryDelta struct {
	Name          string  `json:"name"`
	Inner         int     `json:"tensorrt_build,omitempty"`
	Kind          string  `json:"kind"` // report.RegressionMemory or report.RegressionGPUMemory
	BaselineBytes int64   `json:"baseline_bytes"`
	CurrentBytes  int64   `json:"current_bytes"`
	Percent       float64 `json:"percent"` // (current-baseline)/baseline*100; positive = larger
	Verdict       string  `json:"verdict"` // VerdictOK, VerdictFail, or VerdictNoted
}

// Label names what the delta is of: "bert", "yolo-export #2".
func (d MemoryDelta) Label() string {
	return Delta{Name: d.Name, Inner: d.Inner}.Label()
}

// CompareMemory compares the peak memory of every build of r (and of each
// TensorRT build inside a script build) with the baseline's, host and GPU
// apart. Only builds that succeeded in both and have the figure in both
// are compared: a baseline without memory figures (a report from before
// trt-action measured them, or a machine where GPU memory could not be
// read) is not, nor is a stopped build's peak, nor a cache hit, which ran
// no build (a baseline hit counts with its original build's figures).
// With th.MemoryPercent, a peak larger by strictly more than it fails;
// without, growth is noted.
func CompareMemory(r, baseline *report.Report, th matrix.Regression) []MemoryDelta {
	if baseline == nil {
		return nil
	}
	base := map[string]*report.Build{}
	for i := range baseline.Builds {
		base[baseline.Builds[i].Name] = &baseline.Builds[i]
	}
	var out []MemoryDelta
	for i := range r.Builds {
		cur := &r.Builds[i]
		prev := base[cur.Name]
		if cur.Status != report.StatusOK || prev == nil {
			continue
		}
		out = append(out, compareFigures(cur.Name, 0, cur.Memory, builtMemory(prev), th)...)
		for j := range cur.TensorRTBuilds {
			t := &cur.TensorRTBuilds[j]
			if p := innerOf(prev, t.Index); report.Succeeded(t.Status) && p != nil && report.Succeeded(p.Status) {
				out = append(out, compareFigures(cur.Name, t.Index, t.Memory, p.Memory, th)...)
			}
		}
	}
	return out
}

// builtMemory is a baseline build's memory figures when it succeeded: its
// own, or a cache hit's original build's.
func builtMemory(b *report.Build) *report.Memory {
	switch {
	case b.Status == report.StatusOK:
		return b.Memory
	case b.Status == report.StatusCached && b.Cache != nil && b.Cache.Original != nil:
		return b.Cache.Original.Memory
	}
	return nil
}

func compareFigures(name string, inner int, cur, prev *report.Memory, th matrix.Regression) []MemoryDelta {
	if cur == nil || prev == nil {
		return nil
	}
	var out []MemoryDelta
	for _, f := range []struct {
		kind      string
		now, then int64
	}{
		{report.RegressionMemory, cur.PeakHostBytes, prev.PeakHostBytes},
		{report.RegressionGPUMemory, cur.PeakGPUBytes, prev.PeakGPUBytes},
	} {
		if f.now <= 0 || f.then <= 0 {
			continue
		}
		d := MemoryDelta{Name: name, Inner: inner, Kind: f.kind, BaselineBytes: f.then, CurrentBytes: f.now,
			Percent: float64(f.now-f.then) / float64(f.then) * 100, Verdict: VerdictOK}
		switch {
		case th.MemoryPercent > 0 && d.Percent > th.MemoryPercent:
			d.Verdict = VerdictFail
		case th.MemoryPercent <= 0 && d.Percent > 0:
			d.Verdict = VerdictNoted
		}
		out = append(out, d)
	}
	return out
}

// MemoryTable renders memory deltas as a Markdown section, largest growth
// first (at most maxDeltaRows); "" when none was compared.
func MemoryTable(deltas []MemoryDelta, th matrix.Regression) string {
	if len(deltas) == 0 {
		return ""
	}
	sorted := append([]MemoryDelta(nil), deltas...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Percent > sorted[j].Percent })
	hidden := max(len(sorted)-maxDeltaRows, 0)
	sorted = sorted[:len(sorted)-hidden]
	var sb strings.Builder
	sb.WriteString("### Peak memory against the baseline\n\n")
	if th.MemoryPercent > 0 {
		fmt.Fprintf(&sb, "Threshold: fail over +%g%%.\n\n", th.MemoryPercent)
	} else {
		sb.WriteString("No memory threshold (regression.memory): growth is noted, not judged.\n\n")
	}
	sb.WriteString("| Build | Memory | Baseline | Now | Change | Verdict |\n|---|---|--:|--:|--:|---|\n")
	for _, d := range sorted {
		what := "host"
		if d.Kind == report.RegressionGPUMemory {
			what = "GPU"
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %+.1f%% | %s |\n", text.Markdown(d.Label()), what,
			text.Bytes(d.BaselineBytes), text.Bytes(d.CurrentBytes), d.Percent, memoryVerdictLabel[d.Verdict])
	}
	if hidden > 0 {
		fmt.Fprintf(&sb, "\n… and %d more that changed less; the JSON report has every figure.\n", hidden)
	}
	return sb.String()
}

var memoryVerdictLabel = map[string]string{VerdictOK: "ok", VerdictFail: "❌ fail", VerdictNoted: "📈 grew"}
