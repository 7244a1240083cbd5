//go:build cgo

package realbuild

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/trace"
	"github.com/trt-action/trt-action/native"
)

// buildInProcess runs one real build through the native package, draining
// as often as the worker does, and returns the callbacks it saw.
func buildInProcess(t *testing.T, req native.Request) []trace.Event {
	t.Helper()
	lib := backend.LocateLibrary(backend.Of(backend.TensorRTRTX), "")
	so, err := native.ResolveBackend(backend.TensorRTRTX, lib)
	if err != nil {
		prerequisite(t, "tensorrt-rtx backend: %v", err)
	}
	b, err := native.StartBackend(so, req.WithLibrary(lib))
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
		// A path per pass: with one shared path, a no_monitor build that
		// reports OK but writes nothing would pass on the first pass's file.
		engine := filepath.Join(dir, fmt.Sprintf("mlp-nomonitor-%v.engine", noMonitor))
		events := buildInProcess(t, native.Request{Name: "mlp", ONNX: e.model("mlp"), EngineTmp: engine, NoMonitor: noMonitor})
		if got := len(events) > 0; got == noMonitor {
			t.Errorf("no_monitor=%v: %d callbacks", noMonitor, len(events))
		}
		checkEngineFile(t, fmt.Sprintf("no_monitor=%v", noMonitor), engine)
	}
}

// checkEngineFile asserts path holds a whole TensorRT-RTX engine: large
// enough, its magic, and the length its header records equal to the file's
// (checkEngine does the same for a report's engine; this one has no report).
func checkEngineFile(t *testing.T, label, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", label, err)
		return
	}
	if len(data) < minEngineBytes {
		t.Errorf("%s: engine is only %d bytes", label, len(data))
		return
	}
	if string(data[:4]) != rtxEngineMagic {
		t.Errorf("%s: engine starts with %q, want TensorRT-RTX's %q", label, data[:4], rtxEngineMagic)
	}
	if n := binary.LittleEndian.Uint64(data[rtxEngineLenOffset:]); n != uint64(len(data)) {
		t.Errorf("%s: engine header says %d bytes, file has %d (truncated?)", label, n, len(data))
	}
}
