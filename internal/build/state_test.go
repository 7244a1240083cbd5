package build

import (
	"reflect"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
	"github.com/trt-action/trt-action/internal/trace"
)

// The supervisor folds instances as they finish; the result must be what
// folding the every-instance tree afterwards gives, on the real TensorRT
// 10.16 tree, stopped part-way so some phases never finish.
func TestStateFoldsAsInstancesFinish(t *testing.T) {
	events := trace.Default()
	events = events[:len(events)*2/3]
	folded, detailed := newState(), newDetailedState()
	var now time.Duration
	for i, ev := range events {
		// Whole milliseconds, so exact and reported times agree.
		now += time.Duration(i%4) * time.Millisecond
		ev.T = now
		events[i] = ev
		folded.Apply(ev)
		detailed.Apply(ev)
	}
	end := events[len(events)-1].T + time.Second
	folded.Close(end)
	detailed.Close(end)
	gotTree, gotSlowest := folded.Folded()
	wantTree, wantSlowest := report.FoldInstances(detailed.Tree(), end.Milliseconds(), report.DefaultSlowestInstances)
	if !reflect.DeepEqual(gotTree, wantTree) {
		t.Errorf("folded while running differs from folding every instance afterwards")
	}
	if len(gotSlowest) != report.DefaultSlowestInstances || len(gotSlowest) != len(wantSlowest) {
		t.Fatalf("slowest: got %d, want %d", len(gotSlowest), len(wantSlowest))
	}
	if !reflect.DeepEqual(gotSlowest, wantSlowest) {
		t.Errorf("slowest instances:\n%+v\nwant\n%+v", gotSlowest, wantSlowest)
	}
	if folded.Tree() != nil {
		t.Error("a folded state kept instances")
	}
	if wantTree[0].Unfinished != 1 {
		t.Errorf("the root phase should be unfinished at two thirds of the build, got %+v", *wantTree[0])
	}
}

// Folded state holds one node per phase path however long the build runs.
func TestStateMemoryFollowsTheShape(t *testing.T) {
	one := trace.Default()
	s := newState()
	for range 3 {
		for _, ev := range one {
			s.Apply(ev)
		}
	}
	s.Close(time.Second)
	tree, _ := s.Folded()
	nodes, instances := 0, 0
	var walk func([]*report.PhaseNode)
	walk = func(ns []*report.PhaseNode) {
		for _, n := range ns {
			nodes++
			instances += n.Count
			walk(n.Children)
		}
	}
	walk(tree)
	if len(s.running) != 0 || nodes > 40 || instances < 3*1000 {
		t.Errorf("after three builds' callbacks: %d running, %d nodes for %d instances", len(s.running), nodes, instances)
	}
}

// The report carries the folded tree; every instance only with
// --report-detail full (Options.EveryPhase). Once the build has ended, the
// supervisor holds its trees only in the report's kept encoding.
func TestReportDetail(t *testing.T) {
	dir := t.TempDir()
	for _, every := range []bool{false, true} {
		opts := testOptions(t)
		opts.EveryPhase = every
		rep := runReport([]matrix.Build{simBuild(dir, "detail", nil)}, opts, nil)
		settled := rep.Builds[0]
		if settled.PhaseTree != nil || settled.SlowestPhases != nil || settled.Phases != nil {
			t.Errorf("every=%v: the ended build's trees are still in memory", every)
		}
		b := reporttest.ReadBack(t, rep).Builds[0]
		if b.Status != report.StatusOK || len(b.PhaseTree) != 1 || b.PhaseTree[0].Count != 1 || len(b.SlowestPhases) != report.DefaultSlowestInstances {
			t.Fatalf("every=%v: %s, tree %d roots, %d slowest", every, b.Status, len(b.PhaseTree), len(b.SlowestPhases))
		}
		if every != (len(b.Phases) == 1) {
			t.Errorf("every=%v: %d instance roots", every, len(b.Phases))
		}
	}
}
