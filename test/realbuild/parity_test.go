package realbuild

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/report"
)

// Parity with TensorRT-RTX's own API: a matrix build, which the
// tensorrt-rtx backend (libtam_rtx.so) runs, makes the same engine bytes as
// TensorRT-RTX's Python API given the same model and settings
// (testdata/api_build.py, a user's build without trt-action). The builds
// are deterministic on the CPU (FACTS: the same model and settings give the
// same bytes in another process), so any difference is trt-action's.
//
// scripts/smoke-dist runs these tests, and the script builds', with a
// release's binary and backends (TRT_ACTION_BIN, TRT_ACTION_BACKEND_DIR):
// their C++ runs on LLVM's libc++, TensorRT's on libstdc++, and the engines
// must not tell.

// parityBuild is one build made both ways.
type parityBuild struct {
	name  string
	model string // the ONNX file
	keys  string // the build's matrix keys, each on its own line
	api   string // what api_build.py sets, as its JSON
}

func parityBuilds(t *testing.T, e scriptEnv) []parityBuild {
	t.Helper()
	out, err := exec.Command(e.python, "-c", "import onnx, os; print(os.path.dirname(onnx.__file__))").Output()
	if err != nil {
		t.Fatalf("%s: where is onnx? %v", e.python, err)
	}
	// A real architecture nobody here wrote (the onnx wheel's SqueezeNet,
	// stand-in weights).
	squeezenet := filepath.Join(strings.TrimSpace(string(out)), "backend", "test", "data", "light", "light_squeezenet.onnx")
	return []parityBuild{
		{"cnn", e.model("cnn"), "", `{}`},
		{"squeezenet", squeezenet, "", `{}`},
		{"dynamic", e.model("dynamic"), "shapes: {input: {min: [1, 64], opt: [4, 64], max: [8, 64]}}",
			`{"profiles": [{"input": [[1, 64], [4, 64], [8, 64]]}]}`},
		// Settings that change the plan on the CPU (measured: FACTS §3), and
		// one that is applied but leaves it as it is.
		{"cnn-settings", e.model("cnn"),
			"profiling-verbosity: detailed\ntf32: false\nweight-streaming: true\nmemory-pools: {tactic-shared: 48KiB}\nopt-level: 1",
			`{"profiling_verbosity": "DETAILED", "clear_flags": ["TF32"], "set_flags": ["WEIGHT_STREAMING"],
			  "memory_pools": {"TACTIC_SHARED_MEMORY": 49152}, "builder_optimization_level": 1}`},
	}
}

func TestMatrixBuildsAreTheEnginesOfTensorRTRTXsPythonAPI(t *testing.T) {
	e := newScriptEnv(t)
	cases := parityBuilds(t, e)
	var m strings.Builder
	m.WriteString("version: 1\ndefaults: {backend: tensorrt-rtx}\nbuilds:\n")
	for _, c := range cases {
		m.WriteString("  - name: " + c.name + "\n    onnx: " + c.model + "\n    engine: OUT/" + c.name + ".engine\n")
		for _, line := range strings.Split(c.keys, "\n") {
			if line != "" {
				m.WriteString("    " + line + "\n")
			}
		}
	}
	r := e.build(t, m.String())
	if r.code != exitOK {
		t.Fatalf("exit %d, want %d; output:\n%s", r.code, exitOK, r.output)
	}
	rep := r.report(t)
	script, err := filepath.Abs("testdata/api_build.py")
	if err != nil {
		t.Fatal(err)
	}
	plans := map[string][]byte{}
	for _, c := range cases {
		if b := findBuild(t, rep, c.name); b.Status != report.StatusOK {
			t.Fatalf("%s: %s (%s)", c.name, b.Status, b.Reason)
		}
		if !json.Valid([]byte(c.api)) {
			t.Fatalf("%s: api_build.py's settings are not JSON: %s", c.name, c.api)
		}
		ours, err := os.ReadFile(filepath.Join(r.outDir(), c.name+".engine"))
		if err != nil {
			t.Fatal(err)
		}
		reference := filepath.Join(t.TempDir(), c.name+".engine")
		plainRun(t, t.TempDir(), nil, e.python, script, c.model, reference, c.api)
		theirs, err := os.ReadFile(reference)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("%s: trt-action's engine (%d bytes) differs from the Python API's (%d bytes)", c.name, len(ours), len(theirs))
		}
		plans[c.name] = ours
	}
	// The settings reached both builders: they change the plan.
	if bytes.Equal(plans["cnn"], plans["cnn-settings"]) {
		t.Error("cnn with and without the settings gave the same plan: the comparison proves nothing of the settings")
	}
}
