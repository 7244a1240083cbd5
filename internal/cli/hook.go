package cli

import (
	"fmt"
	"os"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/pyhook"
	"github.com/trt-action/trt-action/native"
)

// runHook is the Python hook written out for a run's script builds: one
// private folder a run, removed when the run ends.
type runHook struct {
	dir    string // "" when no build runs a command
	path   string // the folder to put first on PYTHONPATH
	native string // the folder of the native route's libraries; "" when not found
	// nativeMissing is why native is "": what was not found, and where
	// trt-action looked (the report's route_note of each TensorRT build
	// that then takes the Python route).
	nativeMissing string
}

// prepareHook writes the hook (embedded in the binary: internal/pyhook)
// into a folder only this user can write, when a build runs a command.
func (c *Command) prepareHook(builds []matrix.Build) (*runHook, error) {
	h := &runHook{}
	if !anyScript(builds) {
		return h, nil
	}
	dir, err := os.MkdirTemp("", "trt-action-hook-")
	if err != nil {
		return nil, fmt.Errorf("cannot write the Python hook script builds load: %w", err)
	}
	h.dir = dir
	if h.path, err = pyhook.Extract(dir); err != nil {
		h.remove()
		return nil, fmt.Errorf("cannot write the Python hook script builds load: %w", err)
	}
	if h.native, err = native.NativeDir(); err != nil {
		h.nativeMissing = err.Error() // not found: the Python route, and each build's report says why
	}
	return h, nil
}

func (h *runHook) remove() {
	if h.dir != "" {
		_ = os.RemoveAll(h.dir)
	}
}

func anyScript(builds []matrix.Build) bool {
	for _, b := range builds {
		if b.Script != nil {
			return true
		}
	}
	return false
}
