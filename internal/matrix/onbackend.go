package matrix

import (
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
)

// OnBackend moves every build to the backend name (build's --backend). A
// real backend needs each build's onnx model. A build a simulator stands
// in for keeps no engine path: a simulator's stub must never replace a
// real engine, so such a build keeps nothing. A build with run: runs its
// command on the TensorRT its program imports, which no flag changes: the
// simulator stands in for it as for any build (nothing is run: Script is
// nil), and a real backend other than its own is refused.
func OnBackend(builds []Build, name string) error {
	be, known := backend.Lookup(name)
	if !known {
		return fmt.Errorf("--backend %q: allowed: %s", name, strings.Join(backend.Names(), ", "))
	}
	for i := range builds {
		b := &builds[i]
		switch {
		case b.Script != nil && !be.Simulated && b.Backend != name:
			return fmt.Errorf("--backend %s: build %q runs a command (run:) whose program imports %s, which no flag changes; only --backend %s stands in for it", name, b.Name, b.Backend, backend.Sim)
		case b.Script == nil && !be.Simulated && b.ONNX == "":
			return fmt.Errorf("--backend %s: build %q has no onnx model", name, b.Name)
		}
		if be.Simulated && b.Backend != name {
			b.Engine, b.Script = "", nil
		}
		b.Backend = name
	}
	return nil
}
