package cli

import (
	"fmt"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/pyhook"
	"github.com/trt-action/trt-action/internal/runtmp"
	"github.com/trt-action/trt-action/native"
)

// runHook is the Python hook written out for a run's script builds: one
// private folder a run, removed when the run ends.
type runHook struct {
	dir    *runtmp.Dir // nil when no build runs a command
	path   string      // the folder to put first on PYTHONPATH
	native string      // the folder of the native route's libraries; "" when not found
	// nativeMissing is why native is "": what was not found, and where
	// trt-action looked (the report's route_note of each TensorRT build
	// that then takes the Python route).
	nativeMissing string
}

// prepareHook writes the hook (embedded in the binary: internal/pyhook)
// into a folder only this user can write, when a build runs a command.
// First it removes the temporary folders that runs which died (kill -9)
// left, whichever kind of run this is.
func (c *Command) prepareHook(builds []matrix.Build) (*runHook, error) {
	runtmp.Sweep()
	h := &runHook{}
	if !anyScript(builds) {
		return h, nil
	}
	dir, err := runtmp.Make(runtmp.HookPrefix)
	if err != nil {
		return nil, fmt.Errorf("cannot write the Python hook script builds load: %w", err)
	}
	h.dir = dir
	if h.path, err = pyhook.Extract(dir.Path); err != nil {
		h.remove()
		return nil, fmt.Errorf("cannot write the Python hook script builds load: %w", err)
	}
	if h.native, err = native.NativeDir(); err != nil {
		h.nativeMissing = err.Error() // not found: the Python route, and each build's report says why
	}
	return h, nil
}

func (h *runHook) remove() {
	if h.dir != nil {
		_ = h.dir.Remove()
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
