// Package reporttest holds the sample reports that the report's tests and the
// views' tests render, so every golden file is made from one fixture.
// Only tests import it.
package reporttest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/report"
)

// PhaseTree is one build's phases as TensorRT reports them (times in ms
// from the build's start).
func PhaseTree(endMs int64, finished bool) []*report.Phase {
	end := endMs
	if !finished {
		end = -1
	}
	return []*report.Phase{{
		Name: "Building engine", StartMs: 100, EndMs: end, Done: 4, Steps: 6,
		Children: []*report.Phase{
			{Name: "Optimizing graph", StartMs: 200, EndMs: 4000, Done: 28, Steps: 33},
			{Name: "Computing profile costs", StartMs: 4000, EndMs: end, Done: 9, Steps: 10, Children: []*report.Phase{
				{Name: "Timing tactics", StartMs: 4100, EndMs: end, Done: 1, Steps: 3},
			}},
		},
	}}
}

// OKBuild is a build that finished within its budgets.
func OKBuild(name string, startMs, durMs int64) report.Build {
	return report.Build{
		Name: name, Backend: backend.Sim, Status: report.StatusOK, StartMs: startMs, DurationMs: durMs,
		BudgetUse: 42, Callbacks: 3300, Phases: PhaseTree(durMs-100, true),
		Engine: &report.Engine{Path: "out/" + name + ".engine", Bytes: 12_345_678, SHA256: "ab"},
	}
}

// OverBudgetBuild is a build a phase budget stopped.
func OverBudgetBuild(name string, startMs, durMs int64) report.Build {
	return report.Build{
		Name: name, Backend: backend.TensorRTRTX, Status: report.StatusBudgetExceeded, StartMs: startMs, DurationMs: durMs,
		Reason: `phase "Timing tactics" over its 10s limit`,
		Budget: &report.BudgetHit{Kind: "phase", Phase: "Building engine/Computing profile costs/Timing tactics", LimitMs: 10_000, ElapsedMs: 10_400},
		Phases: PhaseTree(durMs, false),
		Log: []report.LogLine{
			{Severity: "warning", Text: "Unused input"},
			{Severity: "error", Text: "Build cancelled by the progress monitor"},
		},
	}
}

// Sample is a finished run of three builds: ok, over budget, failed (with
// text that must be escaped).
func Sample() *report.Report {
	failed := report.Build{
		Name: "bert|large", Backend: backend.TensorRT, GPU: "1", Status: report.StatusFailed, StartMs: 40_000, DurationMs: 1_500,
		Reason:   "parser error: unsupported op <NonZero> & friends",
		Warnings: []string{"timing cache ignored: version mismatch"},
		Log:      []report.LogLine{{Severity: "error", Text: "ModelImporter.cpp:123: <b>NonZero</b> not supported"}},
	}
	return &report.Report{
		Version: report.SchemaVersion, Tool: "trt-action 0.1.0", Matrix: "matrix.yaml",
		StartedAt:  time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		DurationMs: 41_500, Complete: true,
		Builds: []report.Build{OKBuild("resnet-fp16", 0, 20_000), OverBudgetBuild("yolo_v8", 20_000, 15_000), failed},
	}
}

// Parallel has two builds overlapping in time, run with Jobs: 2.
func Parallel() *report.Report {
	r := Sample()
	r.Builds = r.Builds[:2]
	r.Builds[1].StartMs = 5_000
	r.Builds[1].DurationMs = 30_000
	r.DurationMs = 35_000
	return r
}

// Mixed is a run of n builds of every kind: ok ones (some with the
// every-instance tree only, some folded), over budget, failed with log
// lines, one without phases, and a few still running or pending. Names vary
// in length so the timeline's sections do too, and n = 400 overflows the
// timeline's size limit.
func Mixed(n int) *report.Report {
	r := Sample()
	r.Builds = nil
	for i := range n {
		name := fmt.Sprintf("b-%d-%s", i, strings.Repeat("x", i%37))
		var b report.Build
		switch i % 7 {
		case 0, 1, 2:
			b = OKBuild(name, int64(i)*300, 20_000+int64(i))
		case 3:
			b = OKBuild(name, int64(i)*300, 9_000)
			b.PhaseTree, b.SlowestPhases = report.FoldInstances(b.Phases, b.DurationMs, report.DefaultSlowestInstances)
			b.Phases = nil
			b.Log = []report.LogLine{{Severity: "info", Text: "info"}, {Severity: "warning", Text: "w1"}, {Severity: "warning", Text: "w2"}}
		case 4:
			b = OverBudgetBuild(name, int64(i)*300, 15_000)
		case 5:
			b = Sample().Builds[2]
			b.Name = name
			b.Log = append(b.Log, report.LogLine{Severity: "warning", Text: "after"})
			for e := range 6 { // more than the summary quotes; JUnit has them all
				b.Log = append(b.Log, report.LogLine{Severity: "error", Text: fmt.Sprint("error ", e)})
			}
		case 6:
			b = OKBuild(name, int64(i)*300, 5_000)
			b.Phases = nil
			if i%3 == 0 {
				b.Status = report.StatusRunning // a running build is never settled
				b.Phases = PhaseTree(4_000, false)
			}
		}
		r.Builds = append(r.Builds, b)
	}
	r.Builds[n-1].Status = report.StatusPending
	return r
}

// Settled is Mixed(n) as the supervisor holds it: every build handed to
// Settle, so ended builds keep their trees in the report's spool only.
func Settled(n int) *report.Report {
	r := Mixed(n)
	whole := slices.Clone(r.Builds)
	r.KeepEncodings()
	for i := range whole {
		r.Settle(i, &whole[i])
	}
	return r
}

// CacheHit is a build whose engine came from the engine cache in 50 ms;
// the build that made it took buildMs.
func CacheHit(name string, buildMs int64) report.Build {
	return report.Build{Name: name, Backend: backend.Sim, Status: report.StatusCached, DurationMs: 50,
		Cache: &report.CacheUse{Key: strings.Repeat("e", 64), Hit: true, BuildMs: buildMs}}
}

// Rebuilt is a run with the engine cache and --rebuild: resnet-fp16
// rebuilt, its engine in place of the entry that was there; yolo_v8 built
// and stored; bert-int8 a hit.
func Rebuilt() *report.Report {
	r := Sample()
	rebuilt := OKBuild("resnet-fp16", 0, 20_000)
	rebuilt.Cache = &report.CacheUse{Key: strings.Repeat("a", 64), Stored: true, Rebuilt: true, Replaced: true}
	stored := OKBuild("yolo_v8", 20_000, 15_000)
	stored.Cache = &report.CacheUse{Key: strings.Repeat("b", 64), Stored: true}
	hit := CacheHit("bert-int8", 843_000)
	hit.StartMs = 35_000
	hit.Cache.BuiltAt = r.StartedAt.Add(-49 * time.Hour)
	r.Builds = []report.Build{rebuilt, stored, hit}
	r.DurationMs = 35_050
	return r
}

// ReadBack is r as its JSON report holds it: written and read again, so a
// test sees every build whole (a settled build's detail lives in the
// report's spool until then), exactly as a user of the report would.
func ReadBack(t testing.TB, r *report.Report) *report.Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	if err := report.WriteJSON(path, r); err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
