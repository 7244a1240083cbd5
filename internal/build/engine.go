package build

import (
	"os"
	"path/filepath"

	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/report"
)

// The engine file of one build: where the worker writes it, and keeping or
// removing it once the build's status is decided.

// prepareEngine picks the partial file the worker writes the engine to,
// beside the engine path so that keeping it is a rename. The path must be
// able to take the engine before the build spends time on it, and partial
// files that killed runs left there are removed. A build without an engine
// path writes to a temporary file that is never kept.
func (w *watch) prepareEngine() error {
	engine := w.spec.Engine
	if engine == "" {
		f, err := os.CreateTemp("", "trt-action-discarded-*.engine")
		if err != nil {
			return err
		}
		w.engineTmp = f.Name()
		return f.Close()
	}
	if err := os.MkdirAll(filepath.Dir(engine), 0o755); err != nil {
		return err
	}
	if err := atomicfile.CheckInstall(engine); err != nil {
		return err
	}
	_, _ = atomicfile.RemoveStale(engine) // best effort: a leftover never stops a build
	w.engineTmp = atomicfile.PartialName(engine)
	return nil
}

// keepEngine renames the complete engine into place and fingerprints it;
// a build without an engine path keeps nothing.
func (w *watch) keepEngine() error {
	sum, n, err := fingerprint(w.engineTmp)
	if err != nil {
		return err
	}
	if w.spec.Engine == "" {
		return os.Remove(w.engineTmp)
	}
	if err := atomicfile.Install(w.engineTmp, w.spec.Engine); err != nil {
		return err
	}
	w.res.Engine = &report.Engine{Path: w.spec.Engine, Bytes: n, SHA256: sum}
	return nil
}

// settleEngine acts on a decided status: an ok build's engine is kept
// (an error here fails the build), any other build's partial file removed.
func (w *watch) settleEngine(status string) error {
	if w.engineTmp == "" {
		return nil
	}
	if status != report.StatusOK {
		_ = os.Remove(w.engineTmp)
		return nil
	}
	return w.keepEngine()
}
