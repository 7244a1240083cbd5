package build

import (
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// BenchmarkDeadlineToEnd measures, while callbacks flow, how long a build
// takes to end after a phase budget's deadline: the supervisor notices the
// deadline, tells the worker, the worker sets the monitor's cancel flag, the
// next stepComplete returns false, and the simulator unwinds. Reported as
// ms-deadline-to-end (target: under 50 ms).
func BenchmarkDeadlineToEnd(b *testing.B) {
	dir := b.TempDir()
	opts := Options{Exe: testExe(), WorkerArgs: []string{"-test.run=^$"}, WorkerEnv: []string{workerEnv + "=1"}}
	var total time.Duration
	for b.Loop() {
		build := simBuild(dir, "deadline", func(m *matrix.Build) {
			m.Sim.Step = 200 * time.Microsecond // ~5,000 callbacks a second
			m.Budgets.Phases = []matrix.PhaseBudget{{Pattern: "Timing tactics", Limit: 200 * time.Millisecond}}
		})
		res := runReport([]matrix.Build{build}, opts, nil).Builds[0]
		if res.Status != report.StatusBudgetExceeded {
			b.Fatalf("status %s: %s", res.Status, res.Reason)
		}
		total += time.Duration(res.StopLatencyMs) * time.Millisecond
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-deadline-to-end")
}
