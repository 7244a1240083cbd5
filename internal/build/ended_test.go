package build

import (
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

func TestARunItsBudgetEndedIsCompleteAndSaysWhy(t *testing.T) {
	dir := t.TempDir()
	slow := func(b *matrix.Build) { b.Sim.Step = 2 * time.Millisecond }
	builds := []matrix.Build{simBuild(dir, "a", slow), simBuild(dir, "b", slow), simBuild(dir, "c", slow)}
	opts := testOptions(t)
	opts.Jobs, opts.RunBudget = 1, 300*time.Millisecond
	var last event.Event
	opts.OnEvent = func(ev event.Event) { last = ev }
	rep := runReport(builds, opts, nil)
	if !rep.Complete || rep.Interrupted != "" || rep.Ended != "run budget 300ms exceeded" {
		t.Fatalf("complete=%v interrupted=%q ended=%q; want a complete run that says the run budget ended it", rep.Complete, rep.Interrupted, rep.Ended)
	}
	if last.Kind != event.RunFinished {
		t.Fatalf("last event %v, want run_finished", last.Kind)
	}
	if h := report.Headline(last.Run); !strings.HasPrefix(h, "❌ run budget 300ms exceeded: ") {
		t.Errorf("headline %q must say the run budget ended the run", h)
	}
	if b := rep.Builds[2]; b.Status != report.StatusCancelled || b.Reason != "not started: run budget 300ms exceeded" {
		t.Errorf("c: %s %q", b.Status, b.Reason)
	}
	// The run budget is the run's: the build it stopped is cancelled like
	// the ones it left unstarted, and so is b, whether the loop started it
	// in the run budget's last moment (stopped at once) or not at all.
	for _, b := range rep.Builds {
		if b.Status != report.StatusCancelled || !strings.Contains(b.Reason, "run budget") {
			t.Errorf("%s: %s %q, want cancelled by the run budget", b.Name, b.Status, b.Reason)
		}
	}
}

// The run budget counts from the run's start, for the runner as for its
// builds: a first checkpoint that outlasts the whole budget (a slow disk,
// a loaded machine) leaves every build started with none of it left, and
// the run still ends by its budget, complete and saying so. Before, the
// runner's timer started after that checkpoint, so the builds' own run
// limits ended them all first and the run ended as "3 cancelled", as if
// nothing had run out.
func TestARunBudgetSpentBeforeTheFirstBuildStillEndsTheRun(t *testing.T) {
	dir := t.TempDir()
	builds := []matrix.Build{simBuild(dir, "a", nil), simBuild(dir, "b", nil), simBuild(dir, "c", nil)}
	opts := testOptions(t)
	const budget = 2 * time.Second
	opts.Jobs, opts.RunBudget = 3, budget
	first := true
	opts.Checkpoint = func(*report.Report) {
		if first {
			first = false
			time.Sleep(budget + 500*time.Millisecond)
		}
	}
	rep := runReport(builds, opts, nil)
	if !rep.Complete || rep.Interrupted != "" || rep.Ended != "run budget 2s exceeded" {
		t.Fatalf("complete=%v interrupted=%q ended=%q; want a complete run that says the run budget ended it", rep.Complete, rep.Interrupted, rep.Ended)
	}
	if h := report.Headline(rep); !strings.HasPrefix(h, "❌ run budget 2s exceeded: ") {
		t.Errorf("headline %q must say the run budget ended the run", h)
	}
	for _, b := range rep.Builds {
		if b.Status != report.StatusCancelled || !strings.Contains(b.Reason, "run budget") {
			t.Errorf("%s: %s %q, want cancelled by the run budget", b.Name, b.Status, b.Reason)
		}
	}
}

func TestConcludeRunsBeforeTheLastCheckpointAndEvent(t *testing.T) {
	opts := testOptions(t)
	var seenAtCheckpoint, seenAtEvent bool
	opts.Conclude = func(r *report.Report) { r.Regressions = []report.Regression{{Name: "a", Percent: 50}} }
	opts.Checkpoint = func(r *report.Report) { seenAtCheckpoint = len(r.Regressions) == 1 }
	opts.OnEvent = func(ev event.Event) {
		if ev.Kind == event.RunFinished {
			seenAtEvent = len(ev.Run.Regressions) == 1
		}
	}
	runReport([]matrix.Build{simBuild(t.TempDir(), "a", nil)}, opts, nil)
	if !seenAtCheckpoint || !seenAtEvent {
		t.Errorf("what Conclude adds must reach the last checkpoint (%v) and run_finished (%v)", seenAtCheckpoint, seenAtEvent)
	}
}
