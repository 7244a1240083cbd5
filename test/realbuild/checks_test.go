package realbuild

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
)

// readTrace reads a recorded trace and checks it against the monitor
// contract (trace.Validate: parents running, every step in [0, nbSteps)).
func readTrace(t *testing.T, path string) []trace.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("recorded trace: %v", err)
	}
	defer f.Close()
	events, err := trace.Read(f, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Validate(events); err != nil {
		t.Fatalf("%s breaks the monitor contract:\n%v", path, err)
	}
	return events
}

// traceDepth is the deepest nesting of phases in events (a root is 1).
// Phases are keyed by name while running, which Validate makes unambiguous.
func traceDepth(events []trace.Event) int {
	depth, running := 0, map[string]int{}
	for _, ev := range events {
		switch ev.Kind {
		case trace.Start:
			d := running[ev.Parent] + 1 // a root's parent "" is never running: 0
			running[ev.Phase] = d
			depth = max(depth, d)
		case trace.Finish:
			delete(running, ev.Phase)
		}
	}
	return depth
}

// reportDepth is the deepest nesting of the report's phase tree.
func reportDepth(phases []*report.PhaseNode) int {
	depth := 0
	for _, p := range phases {
		depth = max(depth, 1+reportDepth(p.Children))
	}
	return depth
}

// checkRealTrace asserts a trace looks like a real TensorRT-RTX build:
// nested phases, steps, and as many events as the report counted callbacks.
func checkRealTrace(t *testing.T, path string, b report.Build) []trace.Event {
	t.Helper()
	events := readTrace(t, path)
	if d := traceDepth(events); d < 3 {
		t.Errorf("%s: phases nest %d deep, want at least 3", b.Name, d)
	}
	steps := 0
	for _, ev := range events {
		if ev.Kind == trace.Step {
			steps++
		}
	}
	if steps == 0 {
		t.Errorf("%s: no stepComplete in the trace", b.Name)
	}
	if int64(len(events)) != b.Callbacks {
		t.Errorf("%s: trace has %d events, report counted %d callbacks", b.Name, len(events), b.Callbacks)
	}
	if d := reportDepth(b.PhaseTree); d < 3 {
		t.Errorf("%s: report phase tree %d deep, want at least 3", b.Name, d)
	}
	return events
}

// TensorRT-RTX 1.7 engine header, as observed (not documented): the magic
// "vtrt" at offset 0 and the engine's total length as a little-endian
// uint64 at offset 16. It lets a test see a truncated engine without a GPU:
// IRuntime::getEngineValidity needs CUDA to read the GPU's properties and
// answers kINVALID for every engine on a GPU-less machine.
const (
	rtxEngineMagic     = "vtrt"
	rtxEngineLenOffset = 16
	minEngineBytes     = 16 << 10 // every test model's engine is larger (dynamic: 55 KB)
)

// checkEngine asserts the reported engine is on disk, complete, and matches
// the report; and that no temporary file was left beside it.
func checkEngine(t *testing.T, b report.Build, wantPath string) {
	t.Helper()
	if b.Engine == nil {
		t.Fatalf("%s: report names no engine", b.Name)
	}
	if b.Engine.Path != wantPath {
		t.Errorf("%s: engine path %q, want %q", b.Name, b.Engine.Path, wantPath)
	}
	data, err := os.ReadFile(wantPath)
	if err != nil {
		t.Fatalf("%s: %v", b.Name, err)
	}
	if int64(len(data)) != b.Engine.Bytes {
		t.Errorf("%s: engine is %d bytes, report says %d", b.Name, len(data), b.Engine.Bytes)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != b.Engine.SHA256 {
		t.Errorf("%s: engine sha256 %s, report says %s", b.Name, got, b.Engine.SHA256)
	}
	if len(data) < minEngineBytes {
		t.Fatalf("%s: engine is only %d bytes", b.Name, len(data))
	}
	if string(data[:4]) != rtxEngineMagic {
		t.Errorf("%s: engine starts with %q, want TensorRT-RTX's %q", b.Name, data[:4], rtxEngineMagic)
	}
	if n := binary.LittleEndian.Uint64(data[rtxEngineLenOffset:]); n != uint64(len(data)) {
		t.Errorf("%s: engine header says %d bytes, file has %d (truncated?)", b.Name, n, len(data))
	}
	checkNoPartials(t, filepath.Dir(wantPath))
}

// checkNoPartials asserts no temporary engine file is left in dir (the
// build writes "<engine>.partial-*" and renames it when complete).
func checkNoPartials(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".partial") || strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", filepath.Join(dir, e.Name()))
		}
	}
}

// checkNoEngine asserts a stopped build left neither engine nor temporary.
func checkNoEngine(t *testing.T, b report.Build, path string) {
	t.Helper()
	if b.Engine != nil {
		t.Errorf("%s: report names an engine for a stopped build: %+v", b.Name, b.Engine)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s: engine file %s exists after the build was stopped (%v)", b.Name, path, err)
	}
	checkNoPartials(t, filepath.Dir(path))
}
