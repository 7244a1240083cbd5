//go:build benchreal && cgo

// Command benchreal measures real TensorRT-RTX builds for BENCHMARKS.md and
// prints Markdown tables. Run it through scripts/bench-real, which sets up
// the library, the models and the binary.
//
//  1. Monitor overhead: each model is built in this process through the
//     native package, alternating a build with the progress monitor
//     (drained every 10 ms, as the worker does) and one without it (the
//     request's no_monitor), N times each after one warm-up of each.
//  2. Callbacks and silences: one build of each model by bin/trt-action,
//     read from its --report.
//  3. Stop latency: slow.onnx built by bin/trt-action with a phase budget
//     that runs out, once in a phase full of callbacks and once in the
//     phase that is silent for seconds; the report's stop_latency_ms.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/native"
)

// drainEvery matches internal/build's worker, so the monitored build pays
// what it pays in the product.
const drainEvery = 10 * time.Millisecond

type options struct {
	pairs     int
	stopRuns  int
	models    []string
	modelsDir string
	bin       string
	work      string
}

func main() {
	var o options
	var models string
	flag.IntVar(&o.pairs, "n", 5, "builds with and without the monitor, each, per model")
	flag.IntVar(&o.stopRuns, "stop-runs", 3, "budget-stopped builds per row of the stop-latency table")
	flag.StringVar(&models, "models", "mlp,cnn,dynamic,slow", "comma-separated test models")
	flag.StringVar(&o.modelsDir, "models-dir", "testdata/models", "scripts/make-test-models output")
	flag.StringVar(&o.bin, "bin", "bin/trt-action", "the trt-action binary")
	flag.Parse()
	o.models = strings.Split(models, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchreal:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	work, err := os.MkdirTemp("", "benchreal-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	o.work = work
	if err := overheadTable(o); err != nil {
		return err
	}
	if err := callbackTable(o); err != nil {
		return err
	}
	return stopTable(o)
}

// profiles gives a dynamic model its optimization profile.
func profiles(model string) []map[string]native.Shape {
	if model != "dynamic" {
		return nil
	}
	return []map[string]native.Shape{{"input": {Min: []int64{1, 64}, Opt: []int64{4, 64}, Max: []int64{8, 64}}}}
}

// ---------------------------------------------------------------- overhead

// rtxLibrary is where a build finds the TensorRT-RTX library.
func rtxLibrary() backend.LibraryLocation {
	return backend.LocateLibrary(backend.Of(backend.TensorRTRTX), "")
}

func overheadTable(o options) error {
	so, err := native.ResolveBackend(backend.TensorRTRTX, rtxLibrary())
	if err != nil {
		return err
	}
	fmt.Printf("### Monitor overhead (%d alternating builds each, after one warm-up of each)\n\n", o.pairs)
	fmt.Println("| model | wall, median with monitor | without | overhead of medians | median paired overhead | CPU time, median with | without | CPU overhead | callbacks per build |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, model := range o.models {
		var with, without, cpuWith, cpuWithout []time.Duration
		var callbacks int64
		for i := -1; i < o.pairs; i++ { // i = -1: warm-up, not counted
			for _, noMonitor := range []bool{false, true} {
				took, cpu, n, err := timeBuild(so, o, model, noMonitor)
				if err != nil {
					return fmt.Errorf("%s (no_monitor=%v): %w", model, noMonitor, err)
				}
				switch {
				case i < 0:
				case noMonitor:
					without, cpuWithout = append(without, took), append(cpuWithout, cpu)
				default:
					with, cpuWith, callbacks = append(with, took), append(cpuWith, cpu), n
				}
			}
		}
		mw, mo := median(with), median(without)
		cw, co := median(cpuWith), median(cpuWithout)
		fmt.Printf("| %s | %s | %s | %+.1f%% | %+.1f%% | %s | %s | %+.1f%% | %d |\n", model, ms(mw), ms(mo),
			overhead(mw, mo), pairedOverhead(with, without), ms(cw), ms(co), overhead(cw, co), callbacks)
	}
	fmt.Println()
	return nil
}

func overhead(with, without time.Duration) float64 {
	return 100 * (with.Seconds() - without.Seconds()) / without.Seconds()
}

// pairedOverhead is the median of each monitored build's overhead against
// the unmonitored build right after it: neighbours share the machine's
// load, so this resists slow drift better than the medians' ratio.
func pairedOverhead(with, without []time.Duration) float64 {
	diffs := make([]float64, len(with))
	for i := range with {
		diffs[i] = overhead(with[i], without[i])
	}
	slices.Sort(diffs)
	n := len(diffs)
	if n%2 == 1 {
		return diffs[n/2]
	}
	return (diffs[n/2-1] + diffs[n/2]) / 2
}

// timeBuild builds model once in this process; it returns the wall time
// from the request to the build's end, the CPU time the process used
// meanwhile (user + system, all threads: TensorRT's, the drain's and the
// Go runtime's), and the callbacks received. CPU time suffers less than
// wall time from other processes sharing the cores.
func timeBuild(so string, o options, model string, noMonitor bool) (wall, cpu time.Duration, callbacks int64, err error) {
	engine := filepath.Join(o.work, model+".engine")
	defer os.Remove(engine)
	req := native.Request{Name: model, ONNX: filepath.Join(o.modelsDir, model+".onnx"), EngineTmp: engine,
		Profiles: profiles(model), NoMonitor: noMonitor}
	cpuStart, start := cpuTime(), time.Now()
	b, err := native.StartBackend(so, req.WithLibrary(rtxLibrary()))
	if err != nil {
		return 0, 0, 0, err
	}
	defer b.Close()
	tick := time.NewTicker(drainEvery)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-b.Done():
			done = true
		case <-tick.C:
		}
		callbacks += int64(len(b.Drain(nil)))
		b.Logs(nil)
	}
	wall, cpu = time.Since(start), cpuTime()-cpuStart
	if res := b.Result(); res.Status != native.OK {
		return 0, 0, 0, fmt.Errorf("%s: %s", res.Status, res.Err)
	}
	return wall, cpu, callbacks, nil
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ---------------------------------------------------------------- binary runs

// buildWithBinary runs bin/trt-action on a matrix and returns its report.
func buildWithBinary(o options, name, matrix string) (report.Report, error) {
	dir := filepath.Join(o.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return report.Report{}, err
	}
	file, reportPath := filepath.Join(dir, "matrix.yml"), filepath.Join(dir, "report.json")
	matrix = strings.NewReplacer("MODELS", absPath(o.modelsDir), "OUT", dir).Replace(matrix)
	if err := os.WriteFile(file, []byte(matrix), 0o644); err != nil {
		return report.Report{}, err
	}
	out, err := exec.Command(o.bin, "build", "-f", file, "--report", reportPath).CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		return report.Report{}, fmt.Errorf("%s: %w\n%s", o.bin, err, out)
	}
	var rep report.Report
	data, err := os.ReadFile(reportPath)
	if err != nil {
		return rep, fmt.Errorf("%w\n%s", err, out)
	}
	return rep, json.Unmarshal(data, &rep)
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func callbackTable(o options) error {
	var m strings.Builder
	fmt.Fprintf(&m, "version: 1\ndefaults: {backend: %s}\nbuilds:\n", backend.TensorRTRTX)
	for _, model := range o.models {
		fmt.Fprintf(&m, "  - {name: %s, onnx: MODELS/%s.onnx, engine: OUT/%s.engine", model, model, model)
		if model == "dynamic" {
			m.WriteString(", shapes: {input: {min: [1, 64], opt: [4, 64], max: [8, 64]}}")
		}
		m.WriteString("}\n")
	}
	rep, err := buildWithBinary(o, "callbacks", m.String())
	if err != nil {
		return err
	}
	fmt.Println("### Callbacks and silences (one build each by bin/trt-action, from its report)")
	fmt.Println()
	fmt.Println("| model | status | build | callbacks | callbacks/s | longest silence | silence share |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|")
	for _, b := range rep.Builds {
		secs := float64(b.DurationMs) / 1000
		fmt.Printf("| %s | %s | %d ms | %d | %.0f | %d ms | %.0f%% |\n", b.Name, b.Status, b.DurationMs, b.Callbacks,
			float64(b.Callbacks)/secs, b.LongestSilenceMs, 100*float64(b.LongestSilenceMs)/float64(b.DurationMs))
	}
	fmt.Println()
	return nil
}

// stopCases are phase budgets of slow.onnx that run out: one where
// callbacks keep coming (the stop lands at the next one), one in the phase
// that stays silent for seconds (the stop waits for its only step).
var stopCases = []struct{ phase, limit, what string }{
	{"Cloning network graph", "5ms", "busy: ~3,000 steps in ~25 ms"},
	{"Determining refit engines", "200ms", "silent: one step, at its end"},
}

func stopTable(o options) error {
	fmt.Printf("### From a phase deadline to the build's end (slow.onnx, median of %d)\n\n", o.stopRuns)
	fmt.Println("| budgeted phase | limit | phase | status | stop latency (median, min-max) | build |")
	fmt.Println("|---|---:|---|---|---:|---:|")
	for _, c := range stopCases {
		var latencies, builds []time.Duration
		status := ""
		for i := 0; i < o.stopRuns; i++ {
			matrix := fmt.Sprintf("version: 1\nbuilds:\n  - {name: slow, backend: %s, onnx: MODELS/slow.onnx, "+
				"engine: OUT/slow.engine, budgets: {phases: {%q: %s}}}\n", backend.TensorRTRTX, c.phase, c.limit)
			rep, err := buildWithBinary(o, fmt.Sprintf("stop-%d", i), matrix)
			if err != nil {
				return err
			}
			b := rep.Builds[0]
			status = b.Status
			latencies = append(latencies, time.Duration(b.StopLatencyMs)*time.Millisecond)
			builds = append(builds, time.Duration(b.DurationMs)*time.Millisecond)
		}
		fmt.Printf("| %s | %s | %s | %s | %s (%s-%s) | %s |\n", c.phase, c.limit, c.what, status, ms(median(latencies)),
			ms(slices.Min(latencies)), ms(slices.Max(latencies)), ms(median(builds)))
	}
	fmt.Println()
	return nil
}

// ---------------------------------------------------------------- helpers

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
