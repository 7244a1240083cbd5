package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
)

// The golden file pins folding: counts and totals per phase path, min and
// max, first start and last end, steps summed, unfinished instances counted
// to the build's end, children of different parent instances nested under
// the one folded parent, and the slowest instances in order.
func TestFoldInstancesGolden(t *testing.T) {
	in := readBuild(t, "fold-instances.json")
	tree, slowest := FoldInstances(in.Phases, in.DurationMs, 4)
	got, err := json.MarshalIndent(struct {
		Tree    []*PhaseNode    `json:"phase_tree"`
		Slowest []PhaseInstance `json:"slowest_phases"`
	}{tree, slowest}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "fold.golden.json", string(got)+"\n")
}

func TestFoldNestsUnderFoldedParents(t *testing.T) {
	in := readBuild(t, "fold-instances.json")
	tree, _ := FoldInstances(in.Phases, in.DurationMs, 0)
	if len(tree) != 1 || len(tree[0].Children) != 2 {
		t.Fatalf("want one root with two folded children, got %d roots", len(tree))
	}
	timing := tree[0].Children[0]
	if timing.Name != "Timing tactics" || timing.Count != 2 || timing.TotalMs != 600 || timing.MinMs != 200 || timing.MaxMs != 400 {
		t.Errorf("Timing tactics = %+v, want 2 instances, 600 ms, min 200, max 400", *timing)
	}
	eval := timing.Children[0]
	if len(timing.Children) != 1 || eval.Count != 3 || eval.TotalMs != 100+270+180 {
		t.Errorf("Evaluating tactic times under Timing tactics = %+v, want 3 instances of both parents in one node", *eval)
	}
	measure := eval.Children[0]
	if measure.Count != 4 || measure.TotalMs != 30+50+250+10 || measure.Done != 12 || measure.Steps != 14 {
		t.Errorf("Measuring tactic time = %+v, want 4 instances, 340 ms, 12/14 steps", *measure)
	}
	if got := timing.selfMs(); got != 600-550 {
		t.Errorf("Timing tactics self time = %d, want 50", got)
	}
	root := tree[0]
	if root.Unfinished != 1 || root.LastEndMs != -1 || root.TotalMs != 1000 {
		t.Errorf("unfinished root = %+v, want counted to the build's end (1000 ms) and last end -1", *root)
	}
}

func TestFoldKeepsTheSlowestInstances(t *testing.T) {
	in := readBuild(t, "fold-instances.json")
	_, slowest := FoldInstances(in.Phases, in.DurationMs, 3)
	want := []int64{1000, 400, 270} // Building engine (unfinished), Timing tactics, Evaluating tactic times
	if len(slowest) != len(want) {
		t.Fatalf("kept %d instances, want %d", len(slowest), len(want))
	}
	for i, d := range want {
		if slowest[i].DurationMs != d {
			t.Errorf("slowest[%d] = %+v, want %d ms", i, slowest[i], d)
		}
	}
	if p := slowest[2].Path; len(p) != 3 || p[2] != "Evaluating tactic times" || slowest[2].StartMs != 130 {
		t.Errorf("slowest[2] = %+v, want the second Evaluating tactic times under Timing tactics", slowest[2])
	}
	if slowest[0].EndMs != -1 {
		t.Errorf("an unfinished instance keeps end -1, got %d", slowest[0].EndMs)
	}
}

// A version 1 report (every instance, no folded tree) reads as version 2
// with its tree folded, so merge, comparison and views read one form.
func TestReadJSONFoldsVersion1Reports(t *testing.T) {
	in := readBuild(t, "fold-instances.json")
	in.Name, in.Status = "old", StatusOK
	v1 := map[string]any{"version": 1, "tool": "trt-action 0.1.0", "builds": []Build{*in}}
	data, _ := json.Marshal(v1)
	path := filepath.Join(t.TempDir(), "v1.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	b := r.Builds[0]
	if r.Version != SchemaVersion || len(b.PhaseTree) != 1 || b.PhaseTree[0].Children[0].Count != 2 || len(b.SlowestPhases) == 0 {
		t.Errorf("version 1 report read as version %d with tree %+v, slowest %d", r.Version, b.PhaseTree, len(b.SlowestPhases))
	}
	if SlowestPhase(&b) == "" {
		t.Error("no slowest phase from an upgraded report")
	}
}

func readBuild(t *testing.T, name string) *Build {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var b Build
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	return &b
}
