package build

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// BenchmarkSamplingCost is what sampling a build's memory costs the
// build: the same build with the sampler looking every 100 ms (on) and
// not at all (off: its first look an hour away), alternated, the median
// of each reported (BENCHMARKS.md): the build's time, and the CPU time of
// the supervisor (this process: the sampler's, beside following the
// build), which a loaded machine's noise does not swing as it swings the
// time. Two builds: a simulated one, whose worker and supervisor keep
// both cores busy with a million callbacks, and a script build whose
// command computes for a few seconds beside 300 sleeping processes,
// which every look reads.
//
//	go test -run '^$' -bench SamplingCost -benchtime 1x ./internal/build
func BenchmarkSamplingCost(b *testing.B) {
	sim := func(dir string) matrix.Build {
		return simBuild(dir, "sim", func(b *matrix.Build) { b.Sim.Step, b.Sim.Fast, b.Sim.Repeat = 0, true, 150 })
	}
	tree := func(dir string) matrix.Build {
		return matrix.Build{Name: "tree", Backend: "tensorrt-rtx", Budgets: matrix.Budgets{Grace: 2 * time.Second},
			Script: &matrix.Script{Workdir: dir, Argv: []string{"/bin/sh", "-c",
				`for i in $(seq 300); do sleep 120 & done; exec python3 -c 'x = 0
for i in range(40_000_000): x += i'`}}}
	}
	for _, c := range []struct {
		name  string
		build func(string) matrix.Build
	}{{"sim", sim}, {"tree300", tree}} {
		b.Run(c.name, func(b *testing.B) {
			var on, off, onCPU, offCPU []float64
			for range b.N {
				for range 5 {
					for _, every := range []time.Duration{0, time.Hour} {
						opts := scriptOptions(b)
						opts.memoryEvery = every
						cpu := selfCPU()
						rep, _ := Run([]matrix.Build{c.build(b.TempDir())}, opts, nil)
						cpu = selfCPU() - cpu
						r := rep.Builds[0]
						if r.Status != report.StatusOK {
							b.Fatalf("%s (%s)", r.Status, r.Reason)
						}
						if every == 0 {
							on, onCPU = append(on, float64(r.DurationMs)), append(onCPU, float64(cpu.Milliseconds()))
						} else {
							off, offCPU = append(off, float64(r.DurationMs)), append(offCPU, float64(cpu.Milliseconds()))
						}
					}
				}
			}
			b.ReportMetric(median(on), "ms-sampled")
			b.ReportMetric(median(off), "ms-unsampled")
			b.ReportMetric(median(onCPU), "supervisor-cpu-ms-sampled")
			b.ReportMetric(median(offCPU), "supervisor-cpu-ms-unsampled")
		})
	}
}

// selfCPU is this process's CPU time so far, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
