package build

import (
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/trace"
)

const ms = time.Millisecond

// feed applies callbacks to a state, attaching budgets as the watcher does.
func feed(s *State, b *Budget, evs ...trace.Event) {
	for _, ev := range evs {
		if ch := s.Apply(ev); ch.Started != nil && b != nil {
			b.Attach(ch.Started)
		}
	}
}

func start(t time.Duration, name, parent string, steps int) trace.Event {
	return trace.Event{T: t, Kind: trace.Start, Phase: name, Parent: parent, Steps: steps}
}
func step(t time.Duration, name string, n int) trace.Event {
	return trace.Event{T: t, Kind: trace.Step, Phase: name, Step: n}
}
func finish(t time.Duration, name string) trace.Event {
	return trace.Event{T: t, Kind: trace.Finish, Phase: name}
}

func TestStateKeysPhasesByParentChain(t *testing.T) {
	s := newDetailedState()
	feed(s, nil,
		start(0, "Building engine", "", 6),
		start(1*ms, "Timing graph nodes", "Building engine", 12),
		start(2*ms, "Evaluating tactic times", "Timing graph nodes", 3),
		step(3*ms, "Evaluating tactic times", 0),
		finish(4*ms, "Evaluating tactic times"),
		finish(5*ms, "Timing graph nodes"),
		start(6*ms, "Computing reformatting costs", "Building engine", 9),
		start(7*ms, "Evaluating tactic times", "Computing reformatting costs", 3),
		step(8*ms, "Evaluating tactic times", 1),
	)
	active := s.Active(10 * ms)
	var names []string
	for _, a := range active {
		names = append(names, a.Name)
	}
	if got, want := strings.Join(names, "/"), "Building engine/Computing reformatting costs/Evaluating tactic times"; got != want {
		t.Fatalf("active chain = %q, want %q", got, want)
	}
	if active[2].Done != 2 || active[2].Elapsed != 3*ms {
		t.Errorf("innermost = %+v, want 2 steps done, 3ms elapsed", active[2])
	}
	tree := s.Tree()
	first := tree[0].Children[0].Children[0]
	if first.Name != "Evaluating tactic times" || first.EndMs != 4 || first.Done != 1 {
		t.Errorf("first instance = %+v", first)
	}
	if tree[0].EndMs != -1 {
		t.Errorf("root still running, got end %d", tree[0].EndMs)
	}
}

func TestStateCountsContractBreaksWithoutPanicking(t *testing.T) {
	s := newState()
	feed(s, nil, step(0, "never started", 0), finish(1*ms, "never started"), start(2*ms, "orphan", "missing parent", 1))
	if s.anomalies != 3 {
		t.Fatalf("anomalies = %d, want 3", s.anomalies)
	}
	s.Close(3 * ms)
	if tree, _ := s.Folded(); len(tree) != 1 || tree[0].Name != "orphan" {
		t.Fatalf("an orphan phase becomes a root; tree = %v", tree)
	}
}

func TestStateLongestSilence(t *testing.T) {
	s := newState()
	feed(s, nil, start(0, "A", "", 3), step(10*ms, "A", 0), step(500*ms, "A", 1), step(510*ms, "A", 2))
	if got := s.LongestSilenceUntil(510 * ms); got != 490*ms {
		t.Fatalf("longest silence = %v, want 490ms", got)
	}
	if got := s.LongestSilenceUntil(1200 * ms); got != 690*ms {
		t.Fatalf("longest silence with 690ms still running = %v, want 690ms", got)
	}
}

func TestPhaseBudgetMatchesNameGlobAndPath(t *testing.T) {
	chain := []string{"Building engine", "Building engine from subgraph", "Computing profile costs", "Timing tactics"}
	cases := []struct {
		pattern string
		want    bool
	}{
		{"Timing tactics", true},
		{"Timing*", true},
		{"Computing profile costs/Timing tactics", true},
		{"Building engine/Timing tactics", true},                          // ancestors at any depth
		{"Computing profile costs/Building engine/Timing tactics", false}, // but in order
		{"Building engine/*/Computing profile costs/Timing tactics", true},
		{"Timing tactics/Timing tactics", false},
		{"Optimizing graph", false},
		{"x/y/z/w/Timing tactics", false},
	}
	for _, c := range cases {
		if got := patternMatches(c.pattern, chain); got != c.want {
			t.Errorf("patternMatches(%q) = %v, want %v", c.pattern, got, c.want)
		}
	}
}

func TestPhaseBudgetHitNamesThePhasePath(t *testing.T) {
	b := newBudget(matrix.Budgets{Phases: []matrix.PhaseBudget{{Pattern: "Timing*", Limit: 100 * ms}}}, 0)
	s := newState()
	feed(s, b, start(0, "Building engine", "", 6), start(50*ms, "Timing tactics", "Building engine", 3))
	if v := b.Check(s, 149*ms, 149*ms); v.Hit != nil {
		t.Fatalf("hit before the deadline: %+v", v.Hit)
	}
	if next, ok := b.Next(s, 149*ms, 149*ms); !ok || next != 150*ms {
		t.Fatalf("next check = %v %v, want 150ms", next, ok)
	}
	// A deadline that passed since the last check is still the next one:
	// the caller must check at once, not wait for a later limit.
	if next, ok := b.Next(s, 170*ms, 170*ms); !ok || next != 150*ms {
		t.Fatalf("next check after the deadline = %v %v, want 150ms", next, ok)
	}
	v := b.Check(s, 150*ms, 150*ms)
	if v.Hit == nil || v.Hit.Kind != kindPhase || v.Hit.Phase != "Building engine/Timing tactics" || v.Hit.ElapsedMs != 100 || v.Hit.LimitMs != 100 {
		t.Fatalf("hit = %+v", v.Hit)
	}
	if got := describeHit(v.Hit); !strings.Contains(got, `phase "Building engine/Timing tactics" after 100ms (limit 100ms`) {
		t.Errorf("description = %q", got)
	}
}

func TestPhaseBudgetAppliesToEachInstanceFromItsStart(t *testing.T) {
	b := newBudget(matrix.Budgets{Phases: []matrix.PhaseBudget{{Pattern: "Step*", Limit: 100 * ms}}}, 0)
	s := newState()
	feed(s, b, start(0, "Root", "", 2), start(0, "Step A", "Root", 1), finish(90*ms, "Step A"), start(90*ms, "Step B", "Root", 1))
	if v := b.Check(s, 180*ms, 180*ms); v.Hit != nil {
		t.Fatalf("second instance judged from the first one's start: %+v", v.Hit)
	}
	if v := b.Check(s, 190*ms, 190*ms); v.Hit == nil || v.Hit.Phase != "Root/Step B" {
		t.Fatalf("hit = %+v, want Root/Step B", v.Hit)
	}
}

func TestBuildAndRunBudgets(t *testing.T) {
	b := newBudget(matrix.Budgets{Build: time.Second}, 400*ms)
	s := newState()
	if v := b.Check(s, 399*ms, 399*ms); v.Hit != nil {
		t.Fatalf("early hit %+v", v.Hit)
	}
	if v := b.Check(s, 400*ms, 400*ms); v.Hit == nil || v.Hit.Kind != kindRun {
		t.Fatalf("want the run budget first, got %+v", v.Hit)
	}
	b = newBudget(matrix.Budgets{Build: time.Second}, 0)
	if v := b.Check(s, time.Second, time.Second); v.Hit == nil || v.Hit.Kind != kindBuild {
		t.Fatalf("want build budget, got %+v", v.Hit)
	}
}

func TestStallBudgetCountsFromTheLastCallback(t *testing.T) {
	b := newBudget(matrix.Budgets{Stall: 200 * ms}, 0)
	s := newState()
	if v := b.Check(s, 150*ms, 100*ms); v.Hit != nil {
		t.Fatalf("stalled too early: %+v", v.Hit)
	}
	v := b.Check(s, 300*ms, 100*ms)
	if v.Hit == nil || v.Hit.Kind != kindStall || v.Hit.ElapsedMs != 200 {
		t.Fatalf("hit = %+v", v.Hit)
	}
}

func TestWarningFiresOncePerLimitInstance(t *testing.T) {
	b := newBudget(matrix.Budgets{Build: time.Second, WarnPercent: 80}, 0)
	s := newState()
	if v := b.Check(s, 799*ms, 0); len(v.Warnings) != 0 {
		t.Fatalf("early warning %v", v.Warnings)
	}
	v := b.Check(s, 800*ms, 0)
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "build used 80% of its 1s limit") {
		t.Fatalf("warnings = %q", v.Warnings)
	}
	if v := b.Check(s, 900*ms, 0); len(v.Warnings) != 0 {
		t.Fatalf("warned twice: %v", v.Warnings)
	}
}

// The check wakes at the warn point, then at the deadline: a warning comes
// at its percentage, not only with the hit.
func TestNextWakesAtTheWarnPointBeforeTheDeadline(t *testing.T) {
	b := newBudget(matrix.Budgets{Build: 300 * ms, WarnPercent: 50}, 0)
	s := newState()
	if next, ok := b.Next(s, 0, 0); !ok || next != 150*ms {
		t.Fatalf("next = %v, %v; want the warn point, 150ms", next, ok)
	}
	v := b.Check(s, 150*ms, 0)
	if v.Hit != nil || len(v.Warnings) != 1 || v.Warnings[0] != "build used 50% of its 300ms limit (150ms so far)" {
		t.Fatalf("at the warn point: %+v", v)
	}
	if next, ok := b.Next(s, 150*ms, 0); !ok || next != 300*ms {
		t.Fatalf("next = %v, %v; want the deadline, 300ms", next, ok)
	}
}

func TestNearestAndUse(t *testing.T) {
	b := newBudget(matrix.Budgets{Build: time.Second, Stall: 300 * ms}, 0)
	s := newState()
	if left, name := b.Nearest(s, 100*ms, 50*ms); left != 900*ms || name != "build" {
		t.Fatalf("nearest = %v %q, want 900ms build: a stall limit counts only once quiet for half of it", left, name)
	}
	if left, name := b.Nearest(s, 300*ms, 100*ms); left != 100*ms || name != "stall" {
		t.Fatalf("nearest = %v %q, want 100ms stall", left, name)
	}
	if use := b.Use(s, 500*ms, 400*ms); use != 50 {
		t.Fatalf("use = %v, want 50 (build 500ms of 1s beats stall 100ms of 300ms)", use)
	}
	if left, _ := newBudget(matrix.Budgets{}, 0).Nearest(s, 0, 0); left != -1 {
		t.Fatalf("no limits: left = %v, want -1", left)
	}
}
