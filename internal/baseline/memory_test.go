package baseline

import (
	"reflect"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

func withMemory(b report.Build, host, gpu int64) report.Build {
	b.Memory = &report.Memory{PeakHostBytes: host, PeakGPUBytes: gpu}
	return b
}

func memoryRuns() (base, run *report.Report) {
	ok := func(name string) report.Build {
		return report.Build{Name: name, Status: report.StatusOK, DurationMs: 100e3}
	}
	hit := report.Build{Name: "hit-base", Status: report.StatusCached, Cache: &report.CacheUse{Hit: true, BuildMs: 100e3,
		Original: &report.Build{Name: "hit-base", Status: report.StatusOK, Memory: &report.Memory{PeakHostBytes: 1e9}}}}
	base = &report.Report{Builds: []report.Build{
		withMemory(ok("grew"), 4e9, 2e9),
		withMemory(ok("steady"), 4e9, 0),
		ok("old"), // a baseline from before memory was measured
		withMemory(ok("cached-now"), 1e9, 0),
		hit,
		withMemory(report.Build{Name: "failed-then", Status: report.StatusFailed}, 1e9, 0),
	}}
	nowHit := report.Build{Name: "cached-now", Status: report.StatusCached, Cache: &report.CacheUse{Hit: true, BuildMs: 100e3}}
	run = &report.Report{Builds: []report.Build{
		withMemory(ok("grew"), 5e9, 3e9),
		withMemory(ok("steady"), 4.1e9, 0),
		withMemory(ok("old"), 9e9, 0),
		nowHit,
		withMemory(ok("hit-base"), 1.5e9, 0),
		withMemory(ok("failed-then"), 9e9, 0),
	}}
	return base, run
}

// Peak memory is compared where both runs built the engine and have the
// figure: a baseline without memory figures is not compared, nor a cache
// hit now; a baseline hit counts with its original build's figures.
// With regression.memory, growth over it fails the run, host and GPU
// apart; without it, growth is noted and fails nothing.
func TestMemoryRegressions(t *testing.T) {
	base, _ := memoryRuns()
	th := matrix.Regression{WarnPercent: 10, FailPercent: 25, MemoryPercent: 20}
	_, r := memoryRuns()
	NewGate(base, &th).Mark(r)
	want := []report.Regression{
		{Name: "grew", Kind: report.RegressionMemory, Percent: 25},
		{Name: "grew", Kind: report.RegressionGPUMemory, Percent: 50},
		{Name: "hit-base", Kind: report.RegressionMemory, Percent: 50},
	}
	if !reflect.DeepEqual(r.Regressions, want) {
		t.Errorf("regressions %+v,\nwant %+v", r.Regressions, want)
	}
	var compared []string
	for _, d := range CompareMemory(r, base, th) {
		compared = append(compared, d.Label()+" "+d.Kind+" "+d.Verdict)
	}
	if got := strings.Join(compared, ", "); got != "grew memory fail, grew gpu-memory fail, steady memory ok, hit-base memory fail" {
		t.Errorf("compared: %s", got)
	}
	th.MemoryPercent = 0
	_, r = memoryRuns()
	NewGate(base, &th).Mark(r)
	if len(r.Regressions) != 0 {
		t.Errorf("without a memory threshold: regressions %+v", r.Regressions)
	}
	golden.Check(t, "section-memory-noted.golden.md", NewGate(base, &th).Section(r))
	th.MemoryPercent = 20
	golden.Check(t, "section-memory.golden.md", NewGate(base, &th).Section(r))
	if MemoryTable(nil, th) != "" {
		t.Error("a table of nothing")
	}
}

// A script build's TensorRT builds are compared by index, as their times
// are.
func TestMemoryOfTensorRTBuilds(t *testing.T) {
	inner := func(host int64) report.Build {
		return report.Build{Name: "s", Status: report.StatusOK, Script: &report.Script{}, TensorRTBuilds: []report.TensorRTBuild{
			{Index: 1, Status: report.StatusOK, Memory: &report.Memory{PeakHostBytes: host}}}}
	}
	base := &report.Report{Builds: []report.Build{inner(1e9)}}
	r := &report.Report{Builds: []report.Build{inner(2e9)}}
	d := CompareMemory(r, base, matrix.Regression{MemoryPercent: 50})
	if len(d) != 1 || d[0].Label() != "s #1" || d[0].Verdict != VerdictFail || d[0].Percent != 100 {
		t.Errorf("deltas %+v", d)
	}
}
