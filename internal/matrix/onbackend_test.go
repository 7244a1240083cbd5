package matrix

import (
	"strings"
	"testing"
)

// --backend moves every build; the simulator standing in for a real
// backend drops the engine path (its stub must never replace a real
// engine), and a real backend needs a model.
func TestOnBackend(t *testing.T) {
	builds := func() []Build {
		return []Build{{Name: "real", Backend: "tensorrt-rtx", ONNX: "m.onnx", Engine: "out/real.engine"},
			{Name: "sim", Backend: "sim", Engine: "out/sim.engine"}}
	}
	b := builds()
	if err := OnBackend(b, "sim"); err != nil || b[0].Backend != "sim" || b[0].Engine != "" || b[1].Engine != "out/sim.engine" {
		t.Errorf("--backend sim: %v %+v", err, b)
	}
	b = builds()
	if err := OnBackend(b, "tensorrt-rtx"); err == nil || !strings.Contains(err.Error(), `build "sim" has no onnx model`) {
		t.Errorf("--backend tensorrt-rtx with a build without a model: %v", err)
	}
	if err := OnBackend(builds(), "cuda"); err == nil || !strings.Contains(err.Error(), `--backend "cuda": allowed: `) {
		t.Errorf("unknown backend: %v", err)
	}
}
