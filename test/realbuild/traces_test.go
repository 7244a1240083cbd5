package realbuild

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
)

// recordedModels are the committed real traces, testdata/traces/rtx-1.7-*.jsonl.
var recordedModels = []string{"mlp", "cnn", "dynamic", "slow"}

// TestCommittedTracesAreReal needs nothing installed: the recordings must
// stay valid, nested, and as the real builds left them (every phase done).
func TestCommittedTracesAreReal(t *testing.T) {
	for _, model := range recordedModels {
		t.Run(model, func(t *testing.T) {
			events := readTrace(t, filepath.Join(tracesDir, tracePrefix+model+".jsonl"))
			if d := traceDepth(events); d < 3 {
				t.Errorf("phases nest %d deep, want at least 3", d)
			}
			first, last := events[0], events[len(events)-1]
			if first.Kind != trace.Start || first.Parent != "" || last.Kind != trace.Finish || last.Phase != first.Phase {
				t.Errorf("trace runs from %+v to %+v, want one root phase from start to finish", first, last)
			}
		})
	}
}

// TestSlowTraceHasTheLongSilence pins what the budget and SIGINT tests rely
// on: slow.onnx spends seconds in one phase without a callback.
func TestSlowTraceHasTheLongSilence(t *testing.T) {
	events := readTrace(t, filepath.Join(tracesDir, tracePrefix+"slow.jsonl"))
	var longest time.Duration
	after := 0 // the event that ends the longest silence
	for i := 1; i < len(events); i++ {
		if gap := events[i].T - events[i-1].T; gap > longest {
			longest, after = gap, i
		}
	}
	if longest < 2*time.Second {
		t.Fatalf("longest silence %v, want seconds", longest)
	}
	if ev := events[after]; ev.Kind != trace.Step || ev.Phase != slowPhase {
		t.Errorf("the silence ends with %+v, want the step of %q", ev, slowPhase)
	}
}

// TestRTXReplayMatrix runs examples/rtx-replay.yml verbatim, from a copy of
// its folder layout so its outputs land in a temp dir.
func TestRTXReplayMatrix(t *testing.T) {
	e := binaryEnv(t)
	root := t.TempDir()
	copyFile(t, "../../examples/rtx-replay.yml", filepath.Join(root, "examples", "rtx-replay.yml"))
	for _, model := range recordedModels {
		name := tracePrefix + model + ".jsonl"
		copyFile(t, filepath.Join(tracesDir, name), filepath.Join(root, "testdata", "traces", name))
	}
	matrix := filepath.Join(root, "examples", "rtx-replay.yml")
	if out, err := e.command(t.Context(), "validate", "-f", matrix).CombinedOutput(); err != nil {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	r := run{dir: root}
	out, err := e.command(t.Context(), "build", "-f", matrix, "--report", r.reportPath()).CombinedOutput()
	r.output = string(out)
	if code := exitCode(t, err, r.output); code != exitOK {
		t.Fatalf("build: exit %d\n%s", code, out)
	}
	rep := r.report(t)
	for _, model := range recordedModels {
		b := findBuild(t, rep, "rtx-"+model)
		events := readTrace(t, filepath.Join(tracesDir, tracePrefix+model+".jsonl"))
		if b.Status != report.StatusOK || b.Callbacks != int64(len(events)) {
			t.Errorf("%s: status %s, %d callbacks; want ok and the trace's %d", b.Name, b.Status, b.Callbacks, len(events))
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
