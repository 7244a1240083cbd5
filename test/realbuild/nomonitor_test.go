//go:build cgo

package realbuild

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/trace"
	"github.com/trt-action/trt-action/native"
)

// buildInProcess runs one real build through the native package, draining
// as often as the worker does, and returns the callbacks it saw.
func buildInProcess(t *testing.T, req native.Request) []trace.Event {
	t.Helper()
	so, err := native.ResolveBackend("tensorrt-rtx", "")
	if err != nil {
		prerequisite(t, "tensorrt-rtx backend: %v", err)
	}
	b, err := native.StartBackend(so, req)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var events []trace.Event
	for done := false; !done; {
		select {
		case <-b.Done():
			done = true
		case <-time.After(10 * time.Millisecond):
		}
		events = b.Drain(events)
	}
	if res := b.Result(); res.Status != native.OK {
		t.Fatalf("build %s: %s", res.Status, res.Err)
	}
	return events
}

// no_monitor (the request field scripts/bench-real uses for its baseline)
// builds the same engine without installing the progress monitor.
func TestNoMonitorBuildsWithoutCallbacks(t *testing.T) {
	e := rtxEnv(t)
	t.Setenv("TRT_ACTION_BACKEND_DIR", pathFromEnv(t, "TRT_ACTION_BACKEND_DIR", "../../bin/lib"))
	dir := t.TempDir()
	for _, noMonitor := range []bool{false, true} {
		engine := filepath.Join(dir, "mlp.engine")
		events := buildInProcess(t, native.Request{Name: "mlp", ONNX: e.model("mlp"), EngineTmp: engine, NoMonitor: noMonitor})
		if got := len(events) > 0; got == noMonitor {
			t.Errorf("no_monitor=%v: %d callbacks", noMonitor, len(events))
		}
		if info, err := os.Stat(engine); err != nil || info.Size() < minEngineBytes {
			t.Errorf("no_monitor=%v: engine %v %v", noMonitor, info, err)
		}
	}
}
