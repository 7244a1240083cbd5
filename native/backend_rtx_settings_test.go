//go:build cgo

package native

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests show each builder setting TensorRT-RTX has acting on a real
// plan, built on the CPU: TensorRT-RTX compiles ahead of time without a GPU
// by default (NVIDIA, "CPU-Only AOT and TensorRT-RTX Engines",
// https://docs.nvidia.com/deeplearning/tensorrt-rtx/latest/inference-library/cpu-engines.html).
// Such a build is deterministic: the same model and settings give the same
// bytes, which the test checks first. The settings listed as unchanged left
// the plan byte-identical when measured here (TensorRT-RTX 1.7.1.116, no
// GPU).

// planOf builds cnn.onnx with settings and returns the result and the plan.
func planOf(t *testing.T, so, models string, req Request) (Result, []byte) {
	t.Helper()
	req.Name, req.ONNX = "settings", filepath.Join(models, "cnn.onnx")
	req.EngineTmp = filepath.Join(t.TempDir(), "engine.tmp")
	res, _, _ := runRTX(t, so, req, nil)
	plan, _ := os.ReadFile(req.EngineTmp)
	return res, plan
}

func settingName(s map[string]any) string { return fmt.Sprint(s) }

func TestRTXSettingsChangeThePlan(t *testing.T) {
	so, models := rtxOrSkip(t)
	base, basePlan := planOf(t, so, models, Request{})
	if base.Status != OK || len(basePlan) < 1024 {
		t.Fatalf("baseline: %v %s", base.Status, base.Err)
	}
	again, againPlan := planOf(t, so, models, Request{})
	if again.Status != OK || !bytes.Equal(basePlan, againPlan) {
		t.Fatal("two builds without settings differ: the comparisons below would mean nothing")
	}
	changes := []map[string]any{
		{"profiling-verbosity": "detailed"},
		{"profiling-verbosity": "none"},
		{"weight-streaming": true},
		// Measured here: TF32 is on by default, so turning it off changes the plan.
		{"tf32": false},
		{"memory-pools": map[string]int64{"tactic-shared": 48 << 10}},
		{"version-compatible": true, "exclude-lean-runtime": true},
		// No weights are marked refittable in the model, so this builds.
		{"refit": "individual"},
		{"builder-flags": []string{"require-user-allocation"}},
	}
	seen := map[string]string{}
	for _, s := range changes {
		t.Run(settingName(s), func(t *testing.T) {
			res, plan := planOf(t, so, models, Request{Settings: s})
			if res.Status != OK {
				t.Fatalf("status %v: %s", res.Status, res.Err)
			}
			if bytes.Equal(plan, basePlan) {
				t.Fatalf("the plan is byte-identical to one built without %v", s)
			}
			if other, dup := seen[string(plan)]; dup {
				t.Errorf("same plan as %s", other)
			}
			seen[string(plan)] = settingName(s)
		})
	}
	unchanged := []Request{
		{Settings: map[string]any{"profiling-verbosity": "layer-names-only"}}, // the default
		{Settings: map[string]any{"tf32": true}},
		{Settings: map[string]any{"sparsity": "enable"}},
		{Settings: map[string]any{"sparsity": "disable"}},
		{Settings: map[string]any{"max-aux-streams": 0}},
		{Settings: map[string]any{"max-aux-streams": 4}},
		{Settings: map[string]any{"hardware-compatibility": "ampere-plus"}},
		{Settings: map[string]any{"hardware-compatibility": "same-compute-capability"}},
		{Settings: map[string]any{"runtime-platform": "windows-amd64"}},
		{Settings: map[string]any{"tactic-sources": []string{"-jit-convolutions", "-edge-mask-convolutions"}}},
		{Settings: map[string]any{"max-tactics": 2}},
		{Settings: map[string]any{"l2-limit-for-tiling": 1 << 20}},
		{Settings: map[string]any{"preview-features": []string{"+aliased-plugin-io-10-03", "+runtime-activation-resize-10-10"}}},
		{Settings: map[string]any{"strongly-typed": true}},
		{Settings: map[string]any{"builder-flags": []string{"debug", "disable-timing-cache", "error-on-timing-cache-miss",
			"disable-compilation-cache", "strict-nans", "monitor-memory", "editable-timing-cache", "distributive-independence"}}},
		{Settings: map[string]any{"opt-level": 0}},
		{Settings: map[string]any{"opt-level": 5}},
		{Settings: map[string]any{"tiling-optimization-level": 3}},
	}
	for _, req := range unchanged {
		t.Run(settingName(req.Settings), func(t *testing.T) {
			res, plan := planOf(t, so, models, req)
			if res.Status != OK {
				t.Fatalf("status %v: %s", res.Status, res.Err)
			}
			if !bytes.Equal(plan, basePlan) {
				t.Errorf("a CPU-only plan changed (%d bytes against %d); measured, it stayed byte-identical", len(plan), len(basePlan))
			}
		})
	}
}

// Without CUDA, TensorRT-RTX's compiler cannot build refittable or
// weight-stripped plans, nor version-compatible ones without the lean
// runtime beside it: the build must fail with TensorRT's own message and
// name the settings, not crash or hang.
func TestRTXSettingsThatNeedCUDAFailCleanly(t *testing.T) {
	so, models := rtxOrSkip(t)
	for _, tc := range []struct {
		settings map[string]any
		want     []string
	}{
		{map[string]any{"refit": "refit"}, []string{"Myelin", "CUDA_SUCCESS", "(with settings: refit)"}},
		{map[string]any{"refit": "identical"}, []string{"Myelin", "(with settings: refit)"}},
		{map[string]any{"strip-weights": true, "refit": "identical"}, []string{"Error Code", "(with settings: refit, strip-weights)"}},
		{map[string]any{"strip-weights": true}, []string{"Myelin", "(with settings: strip-weights)"}},
		{map[string]any{"version-compatible": true}, []string{"libnvinfer_lean", "(with settings: version-compatible)"}},
	} {
		t.Run(settingName(tc.settings), func(t *testing.T) {
			res, plan := planOf(t, so, models, Request{Settings: tc.settings})
			if res.Status != Failed {
				t.Fatalf("status %v, want failed: %s", res.Status, res.Err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Err, w) {
					t.Errorf("error %q lacks %q", res.Err, w)
				}
			}
			if len(plan) != 0 {
				t.Errorf("a failed build left %d bytes", len(plan))
			}
		})
	}
}

// tinyPlugin compiles testdata/plugin/tiny_plugin.cc against the
// TensorRT-RTX headers (TRT_RTX_INCLUDE, which scripts/setup-tensorrt-rtx
// exports).
func tinyPlugin(t *testing.T) string {
	t.Helper()
	include := os.Getenv("TRT_RTX_INCLUDE")
	if include == "" {
		t.Skip("TRT_RTX_INCLUDE is not set (eval \"$(scripts/setup-tensorrt-rtx)\")")
	}
	out := filepath.Join(t.TempDir(), "libtam_tiny_plugin.so")
	cmd := exec.Command("g++", "-std=c++17", "-shared", "-fPIC", "-isystem", include,
		"-idirafter", filepath.Join("backends", "cuda-stub"), "-o", out, filepath.Join("testdata", "plugin", "tiny_plugin.cc"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling the plugin: %v\n%s", err, msg)
	}
	return out
}

func TestRTXPlugins(t *testing.T) {
	so, models := rtxOrSkip(t)
	plugin := tinyPlugin(t)
	_, basePlan := planOf(t, so, models, Request{})

	res, plan := planOf(t, so, models, Request{Settings: map[string]any{"plugins": []string{plugin}}})
	if res.Status != OK {
		t.Fatalf("loading a plugin library: %v %s", res.Status, res.Err)
	}
	if !bytes.Equal(plan, basePlan) {
		t.Error("a loaded plugin nobody uses changed the plan")
	}

	res, plan = planOf(t, so, models, Request{Settings: map[string]any{"plugins-serialize": []string{plugin}}})
	lib, _ := os.ReadFile(plugin)
	if res.Status != OK {
		t.Fatalf("plugins-serialize: %v %s", res.Status, res.Err)
	}
	if len(plan) < len(basePlan)+len(lib)/2 {
		t.Errorf("plugins-serialize: the plan grew from %d to %d bytes; the %d-byte library is not in it", len(basePlan), len(plan), len(lib))
	}

	notPlugin := filepath.Join(t.TempDir(), "libnot.so")
	if err := os.WriteFile(notPlugin, []byte("not a shared object"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want string
	}{
		{filepath.Join(t.TempDir(), "missing.so"), "does not exist"},
		{notPlugin, "plugins: TensorRT refused plugin library " + notPlugin + ": IPluginRegistry::loadLibrary"},
	} {
		res, _ := planOf(t, so, models, Request{Settings: map[string]any{"plugins": []string{tc.path}}})
		if res.Status != Failed || !strings.Contains(res.Err, tc.want) || !strings.Contains(res.Err, tc.path) {
			t.Errorf("plugin %s: status %v, error %q; want failed naming the key and the file", tc.path, res.Status, res.Err)
		}
	}
}

// Keys TensorRT-RTX lacks fail before the library is even loaded, naming
// which TensorRT has them (the matrix refuses them first; this is the
// backend's own guard).
func TestRTXRefusesDatacenterSettings(t *testing.T) {
	so, models := rtxOrSkip(t)
	for _, tc := range []struct {
		settings map[string]any
		want     string
	}{
		{map[string]any{"strongly-typed": false}, "strongly-typed: false: TensorRT-RTX 1.x has no such setting; only TensorRT 10.x"},
		{map[string]any{"precision-constraints": "obey"}, "precision-constraints: TensorRT-RTX 1.x has no such setting"},
		{map[string]any{"layer-precisions": []map[string]string{{"layer": "*", "type": "fp16"}}}, "layer-precisions: TensorRT-RTX"},
		{map[string]any{"tactic-sources": []string{"+cublas"}}, "tactic-sources cublas: TensorRT-RTX"},
		{map[string]any{"dla": map[string]any{"core": 0}}, "dla: TensorRT-RTX 1.x has no such setting; only backend tensorrt has it (TensorRT-RTX has no DLA)"},
		{map[string]any{"memory-pools": map[string]int64{"dla-sram": 1}}, "memory-pools.dla-sram: TensorRT-RTX 1.x has no such setting"},
	} {
		res, _ := planOf(t, so, models, Request{Settings: tc.settings})
		if res.Status != Failed || !strings.Contains(res.Err, tc.want) {
			t.Errorf("%v: status %v, error %q; want failed with %q", tc.settings, res.Status, res.Err, tc.want)
		}
	}
}
