package build

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// scaleRepeat replays the built-in TensorRT 10.16 tree (6,439 callbacks,
// 1,164 phase instances) often enough for a build of over a million
// callbacks and 200,000 phase instances.
const scaleRepeat = 175

// BenchmarkScale replays one huge simulated build as fast as the pipeline
// takes it (step: 0s), from the simulator's threads through the worker, the
// pipe and the supervisor's state to the report. x2 doubles the build:
// memory must stay flat. Metrics: callbacks a second end to end, peak
// resident memory of the supervisor (this process) and of the worker, and
// the size of the build's JSON report.
//
//	go test ./internal/build -run '^$' -bench Scale -benchtime 1x -count 5
func BenchmarkScale(b *testing.B) {
	for _, size := range []struct {
		name   string
		repeat int
	}{{"x1", scaleRepeat}, {"x2", 2 * scaleRepeat}} {
		b.Run(size.name, func(b *testing.B) {
			dir := b.TempDir()
			opts := Options{Exe: testExe(), WorkerArgs: []string{"-test.run=^$"}, WorkerEnv: []string{workerEnv + "=1"}}
			var callbacks int64
			var wall time.Duration
			var supMB, repBytes float64
			for b.Loop() {
				build := simBuild(dir, "scale", func(m *matrix.Build) { m.Sim.Fast, m.Sim.Repeat = true, size.repeat })
				resetPeakRSS(b)
				start := time.Now()
				res := runReport([]matrix.Build{build}, opts, nil).Builds[0]
				wall += time.Since(start)
				if res.Status != report.StatusOK || res.Callbacks < int64(size.repeat)*6439 {
					b.Fatalf("status %s after %d callbacks: %s %v", res.Status, res.Callbacks, res.Reason, res.Warnings)
				}
				callbacks += res.Callbacks
				supMB = max(supMB, peakRSSMB(b))
				data, _ := json.Marshal(res)
				repBytes = float64(len(data))
			}
			b.ReportMetric(float64(callbacks)/wall.Seconds(), "callbacks/s")
			b.ReportMetric(supMB, "supervisor-MB")
			b.ReportMetric(workerPeakMB(b), "worker-MB")
			b.ReportMetric(repBytes, "report-bytes")
		})
	}
}

// BenchmarkScaleDeadline is DeadlineToEnd while callbacks flow as fast as
// the pipeline takes them. phase: a 10 ms budget on each "Building engine"
// of the repeated tree, which the first one overruns; build: a 400 ms build
// budget, which runs out in full flow.
//
//	go test ./internal/build -run '^$' -bench ScaleDeadline -benchtime 5x -count 3
func BenchmarkScaleDeadline(b *testing.B) {
	for _, c := range []struct {
		name   string
		budget func(*matrix.Budgets)
	}{
		{"phase", func(m *matrix.Budgets) {
			m.Phases = []matrix.PhaseBudget{{Pattern: "Building engine", Limit: 10 * time.Millisecond}}
		}},
		{"build", func(m *matrix.Budgets) { m.Build = 400 * time.Millisecond }},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			opts := Options{Exe: testExe(), WorkerArgs: []string{"-test.run=^$"}, WorkerEnv: []string{workerEnv + "=1"}}
			var total time.Duration
			var callbacks int64
			for b.Loop() {
				build := simBuild(dir, "deadline", func(m *matrix.Build) {
					m.Sim.Fast, m.Sim.Repeat = true, scaleRepeat
					c.budget(&m.Budgets)
				})
				res := runReport([]matrix.Build{build}, opts, nil).Builds[0]
				if res.Status != report.StatusBudgetExceeded {
					b.Fatalf("status %s: %s", res.Status, res.Reason)
				}
				total += time.Duration(res.StopLatencyMs) * time.Millisecond
				callbacks += res.Callbacks
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-deadline-to-end")
			b.ReportMetric(float64(callbacks)/float64(b.N), "callbacks-before-end")
		})
	}
}

// resetPeakRSS starts this process's peak resident memory afresh (Linux:
// writing 5 to clear_refs resets VmHWM).
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("reset peak RSS: %v", err)
	}
}

// peakRSSMB is this process's peak resident memory since the last reset.
func peakRSSMB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// workerPeakMB is the largest peak resident memory of any worker this
// process has waited for.
func workerPeakMB(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Maxrss) / 1024
}
