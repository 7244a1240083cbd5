// Package realbuild holds end-to-end tests of bin/trt-action building real
// engines with TensorRT-RTX on the CPU (see harness_test.go for the set-up).
package realbuild

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// -update copies the traces recorded by TestModelsBuildWithRealCallbacks
// into testdata/traces (the simulator's RTX scenarios).
var update = flag.Bool("update", false, "record the real traces into testdata/traces")

const (
	tracesDir     = "../../testdata/traces"
	tracePrefix   = "rtx-1.7-" // the traces are of TensorRT-RTX 1.7.x
	exitOK        = 0
	exitFailed    = 1
	exitBudget    = 3
	exitInterrupt = 130
	// sigintWindow is the contract: exit before GitHub's runner follows its
	// SIGINT with SIGTERM, 7.5 s later. (Measured, on a real build that
	// gives no callback for seconds so the worker has to be killed: 1.5 to
	// 2.0 s; BENCHMARKS.md. The test is not a speed benchmark: TensorRT
	// fills both cores while it is timed.)
	sigintWindow = 7 * time.Second
	// slowPhase is where slow.onnx spends nearly all its build time, with a
	// single step reported at the phase's end.
	slowPhase = "Determining refit engines"
)

// modelsMatrix builds every test model that should succeed.
const modelsMatrix = `version: 1
defaults: {backend: tensorrt-rtx}
builds:
  - name: ${{ matrix.model }}
    onnx: MODELS/${{ matrix.model }}.onnx
    engine: OUT/${{ matrix.model }}.engine
    matrix: {model: [mlp, cnn, slow]}
  - name: dynamic
    onnx: MODELS/dynamic.onnx
    engine: OUT/dynamic.engine
    shapes: {input: {min: [1, 64], opt: [4, 64], max: [8, 64]}}
`

func (e env) matrix(m string) string { return strings.ReplaceAll(m, "MODELS", e.models) }

func TestModelsBuildWithRealCallbacks(t *testing.T) {
	e := rtxEnv(t)
	r := e.build(t, e.matrix(modelsMatrix))
	if r.code != exitOK {
		t.Fatalf("exit %d, want %d; output:\n%s", r.code, exitOK, r.output)
	}
	rep := r.report(t)
	if !rep.Complete {
		t.Error("report not marked complete")
	}
	for _, name := range []string{"mlp", "cnn", "dynamic", "slow"} {
		t.Run(name, func(t *testing.T) {
			b := findBuild(t, rep, name)
			if b.Status != report.StatusOK {
				t.Fatalf("status %s (%s), want ok", b.Status, b.Reason)
			}
			if !strings.HasPrefix(b.Library, "TensorRT-RTX 1.") {
				t.Errorf("library %q, want TensorRT-RTX 1.x", b.Library)
			}
			checkRealTrace(t, r.tracePath(name), b)
			checkEngine(t, b, filepath.Join(r.outDir(), name+".engine"))
			t.Logf("%s: %d ms, %d callbacks, longest silence %d ms, engine %d bytes",
				name, b.DurationMs, b.Callbacks, b.LongestSilenceMs, b.Engine.Bytes)
			if *update {
				recordTrace(t, r.tracePath(name), name)
			}
		})
	}
}

// recordTrace copies a validated trace into testdata/traces.
func recordTrace(t *testing.T, from, model string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(tracesDir, tracePrefix+model+".jsonl")
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", to)
}

// A build budget that runs out inside TensorRT-RTX's silent phase cannot
// stop the build at a callback (the phase reports its only step at its
// end): the grace runs out and the worker is killed. The build is still
// over budget, not killed, and --fail-on failure passes the step.
func TestBuildBudgetRunningOutInTheSilentPhaseIsOverBudget(t *testing.T) {
	e := rtxEnv(t)
	// The silent phase holds slow.onnx's build from about 0.2 s to 4 s
	// (testdata/traces/rtx-1.7-slow.jsonl): the budget runs out in it, and
	// the grace ends long before its step.
	r := e.build(t, e.matrix(`version: 1
builds:
  - name: slow
    backend: tensorrt-rtx
    onnx: MODELS/slow.onnx
    engine: OUT/slow.engine
    budgets: {build: 1500ms, grace: 300ms}
`), "--fail-on", "failure")
	if r.code != exitOK {
		t.Fatalf("exit %d, want %d (--fail-on failure, and only a budget ran out); output:\n%s", r.code, exitOK, r.output)
	}
	b := findBuild(t, r.report(t), "slow")
	if b.Status != report.StatusBudgetExceeded || !strings.HasSuffix(b.Reason, "; did not stop within its 300ms grace, so it was killed") {
		t.Fatalf("status %s (%s), want %s, killed after its grace", b.Status, b.Reason, report.StatusBudgetExceeded)
	}
	if b.Budget == nil || b.Budget.Kind != "build" {
		t.Errorf("budget hit %+v, want the build limit", b.Budget)
	}
	if _, err := os.Stat(filepath.Join(r.outDir(), "slow.engine")); !os.IsNotExist(err) {
		t.Errorf("a killed build left an engine: %v", err)
	}
}

func TestPhaseBudgetStopsThroughStepComplete(t *testing.T) {
	e := rtxEnv(t)
	const limit = 200 * time.Millisecond
	r := e.build(t, e.matrix(fmt.Sprintf(`version: 1
builds:
  - name: slow
    backend: tensorrt-rtx
    onnx: MODELS/slow.onnx
    engine: OUT/slow.engine
    budgets: {phases: {%q: %s}}
`, slowPhase, limit)))
	if r.code != exitBudget {
		t.Fatalf("exit %d, want %d; output:\n%s", r.code, exitBudget, r.output)
	}
	b := findBuild(t, r.report(t), "slow")
	if b.Status != report.StatusBudgetExceeded {
		t.Fatalf("status %s (%s), want %s", b.Status, b.Reason, report.StatusBudgetExceeded)
	}
	if b.Budget == nil || b.Budget.Kind != "phase" || !strings.HasSuffix(b.Budget.Phase, "/"+slowPhase) ||
		b.Budget.LimitMs != limit.Milliseconds() {
		t.Errorf("budget hit %+v, want the phase limit on .../%s", b.Budget, slowPhase)
	}
	if !strings.Contains(b.Reason, slowPhase) {
		t.Errorf("reason %q does not name the phase", b.Reason)
	}
	// TensorRT's own error says the build was cancelled from stepComplete
	// (a killed worker could not have logged it).
	if !logged(b, "BuildCanceled") {
		t.Errorf("no BuildCanceled error from TensorRT in the log: %+v", b.Log)
	}
	// The stop waits for the phase's only stepComplete, at its end.
	if b.StopLatencyMs <= 0 || b.StopLatencyMs >= b.DurationMs {
		t.Errorf("stop_latency_ms %d, want within (0, %d)", b.StopLatencyMs, b.DurationMs)
	}
	t.Logf("stopped %d ms after the deadline; build %d ms, longest silence %d ms",
		b.StopLatencyMs, b.DurationMs, b.LongestSilenceMs)
	readTrace(t, r.tracePath("slow"))
	checkNoEngine(t, b, filepath.Join(r.outDir(), "slow.engine"))
}

func logged(b report.Build, text string) bool {
	for _, l := range b.Log {
		if strings.Contains(l.Text, text) {
			return true
		}
	}
	return false
}

func TestSIGINTDuringARealBuild(t *testing.T) {
	e := rtxEnv(t)
	r := newRun(t, e.matrix(`version: 1
builds:
  - {name: slow, backend: tensorrt-rtx, onnx: MODELS/slow.onnx, engine: OUT/slow.engine}
`))
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := e.buildCommand(ctx, r)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the build is inside its long phase, as a cancelled CI
	// job would: mid-build, far from any callback.
	seen, rest := waitForLine(stdout, slowPhase)
	if !seen {
		_ = cmd.Wait()
		t.Fatalf("the build never reached %q:\n%s%s", slowPhase, rest, stderr.String())
	}
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	tail, _ := io.ReadAll(stdout)
	err = cmd.Wait()
	took := time.Since(sent)
	r.output = rest + string(tail) + stderr.String()
	if code := exitCode(t, err, r.output); code != exitInterrupt {
		t.Fatalf("exit %d, want %d; output:\n%s", code, exitInterrupt, r.output)
	}
	if took > sigintWindow {
		t.Errorf("exited %v after SIGINT, want within %v", took, sigintWindow)
	}
	rep := r.report(t)
	if rep.Complete || !strings.HasPrefix(rep.Interrupted, "SIGINT") {
		t.Errorf("report complete=%v interrupted=%q, want an incomplete report interrupted by SIGINT",
			rep.Complete, rep.Interrupted)
	}
	b := findBuild(t, rep, "slow")
	// cancelled when a stepComplete came within the grace, killed when not.
	if (b.Status != report.StatusCancelled && b.Status != report.StatusKilled) || !strings.Contains(b.Reason, "SIGINT") {
		t.Errorf("status %s (%s), want cancelled or killed because of SIGINT", b.Status, b.Reason)
	}
	t.Logf("exit %v after SIGINT; %s, stop_latency_ms %d", took.Round(time.Millisecond), b.Status, b.StopLatencyMs)
	readTrace(t, r.tracePath("slow"))
	checkNoEngine(t, b, filepath.Join(r.outDir(), "slow.engine"))
}

// waitForLine reads progress lines until one contains text; it returns
// whether it was seen and everything read.
func waitForLine(r io.Reader, text string) (bool, string) {
	var read strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		read.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), text) {
			return true, read.String()
		}
	}
	return false, read.String()
}

func TestRejectedModelFailsAndTheOthersBuild(t *testing.T) {
	e := rtxEnv(t)
	r := e.build(t, e.matrix(`version: 1
defaults: {backend: tensorrt-rtx}
builds:
  - name: ${{ matrix.model }}
    onnx: MODELS/${{ matrix.model }}.onnx
    engine: OUT/${{ matrix.model }}.engine
    matrix: {model: [mlp, rejected, cnn]}
`))
	if r.code != exitFailed {
		t.Fatalf("exit %d, want %d; output:\n%s", r.code, exitFailed, r.output)
	}
	rep := r.report(t)
	rejected := findBuild(t, rep, "rejected")
	if rejected.Status != report.StatusFailed {
		t.Errorf("rejected: status %s, want %s", rejected.Status, report.StatusFailed)
	}
	// The parser's message names the node and the operator it refused.
	for _, want := range []string{"unique_values", "Unique"} {
		if !strings.Contains(rejected.Reason, want) {
			t.Errorf("rejected: reason %q does not contain %q", rejected.Reason, want)
		}
	}
	checkNoEngine(t, rejected, filepath.Join(r.outDir(), "rejected.engine"))
	for _, name := range []string{"mlp", "cnn"} {
		b := findBuild(t, rep, name)
		if b.Status != report.StatusOK {
			t.Errorf("%s: status %s (%s), want ok", name, b.Status, b.Reason)
			continue
		}
		checkEngine(t, b, filepath.Join(r.outDir(), name+".engine"))
	}
}
