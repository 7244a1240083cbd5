package matrix

import (
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
)

// OnBackend moves every build to the backend name (build's --backend). A
// real backend needs each build's onnx model. A build a simulator stands
// in for keeps no engine path: a simulator's stub must never replace a
// real engine, so such a build keeps nothing.
func OnBackend(builds []Build, name string) error {
	be, known := backend.Lookup(name)
	if !known {
		return fmt.Errorf("--backend %q: allowed: %s", name, strings.Join(backend.Names(), ", "))
	}
	for i := range builds {
		if !be.Simulated && builds[i].ONNX == "" {
			return fmt.Errorf("--backend %s: build %q has no onnx model", name, builds[i].Name)
		}
		if be.Simulated && builds[i].Backend != name {
			builds[i].Engine = ""
		}
		builds[i].Backend = name
	}
	return nil
}
