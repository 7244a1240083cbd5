package realbuild

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/report"
)

// settingsMatrix varies a setting along a matrix axis, and asks for one
// that TensorRT-RTX's compiler cannot build without CUDA, alone and with
// every fixed setting.
const settingsMatrix = `version: 1
defaults: {backend: tensorrt-rtx, onnx: MODELS/cnn.onnx}
builds:
  - name: cnn-${{ matrix.verbosity }}
    engine: OUT/cnn-${{ matrix.verbosity }}.engine
    profiling-verbosity: ${{ matrix.verbosity }}
    tf32: true
    matrix: {verbosity: [none, detailed]}
  - name: cnn-refit
    engine: OUT/cnn-refit.engine
    refit: identical
  - name: dynamic-refit
    onnx: MODELS/dynamic.onnx
    engine: OUT/dynamic-refit.engine
    refit: identical
    opt-level: 1
    tiling-optimization-level: 1
    precision: tf32
    targets: [sm86]
    workspace: 256MiB
    shapes: {input: {min: [1, 64], opt: [4, 64], max: [8, 64]}}
`

func TestSettingsReachRealBuilds(t *testing.T) {
	e := rtxEnv(t)
	r := e.build(t, e.matrix(settingsMatrix))
	if r.code != exitFailed {
		t.Fatalf("exit %d, want %d (two builds fail); output:\n%s", r.code, exitFailed, r.output)
	}
	rep := r.report(t)
	var plans [][]byte
	for _, v := range []string{"none", "detailed"} {
		b := findBuild(t, rep, "cnn-"+v)
		if b.Status != report.StatusOK {
			t.Fatalf("%s: status %s (%s)", b.Name, b.Status, b.Reason)
		}
		if b.Settings == nil || b.Settings.Applied["profiling-verbosity"] != v || b.Settings.Applied["tf32"] != true {
			t.Errorf("%s: settings %+v, want profiling-verbosity %s and tf32 true", b.Name, b.Settings, v)
		}
		if b.Settings != nil && !strings.HasPrefix(b.Settings.Library, "TensorRT-RTX 1.") {
			t.Errorf("%s: settings library %q, want TensorRT-RTX 1.x", b.Name, b.Settings.Library)
		}
		plan, err := os.ReadFile(filepath.Join(r.outDir(), b.Name+".engine"))
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, plan)
	}
	if bytes.Equal(plans[0], plans[1]) {
		t.Error("profiling-verbosity none and detailed gave the same plan: the setting did not reach the builder")
	}
	refit := findBuild(t, rep, "cnn-refit")
	if refit.Status != report.StatusFailed || !strings.Contains(refit.Reason, "CUDA") || !strings.Contains(refit.Reason, "with settings: refit") {
		t.Errorf("cnn-refit: status %s, reason %q; want failed with TensorRT's message naming refit", refit.Status, refit.Reason)
	}
	if _, err := os.Stat(filepath.Join(r.outDir(), "cnn-refit.engine")); !os.IsNotExist(err) {
		t.Errorf("a failed build left an engine: %v", err)
	}
	// Every builder setting the build had is named, the fixed keys
	// (precision, shapes, targets) as well as the others, under the names
	// the report's settings use (workspace is memory-pools.workspace).
	const all = "(with settings: memory-pools, opt-level, precision, refit, shapes, targets, tiling-optimization-level)"
	if b := findBuild(t, rep, "dynamic-refit"); b.Status != report.StatusFailed || !strings.HasSuffix(b.Reason, all) {
		t.Errorf("dynamic-refit: status %s, reason %q; want failed, ending %q", b.Status, b.Reason, all)
	}
}
