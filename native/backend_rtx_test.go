//go:build cgo

package native

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/trace"
)

// These tests build real engines with TensorRT-RTX on the CPU. They need
// libtam_rtx.so (make, after scripts/setup-tensorrt-rtx; found through
// TRT_ACTION_BACKEND_DIR, default ../bin/lib), the TensorRT-RTX
// libraries on LD_LIBRARY_PATH or in TRT_ACTION_RTX_LIB, and the models of
// scripts/make-test-models in TRT_ACTION_TEST_MODELS (default
// ../testdata/models). Without them they skip, except in CI (CI set, or
// TRT_ACTION_REQUIRE_RTX=1), where a missing prerequisite is a failure.
// Under -short (make check, the fast loop) they skip too, except in CI,
// where -short changes nothing.

func rtxOrSkip(t *testing.T) (soPath, models string) {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("TRT_ACTION_REQUIRE_RTX") == "1" || os.Getenv("CI") != "" {
		skip = t.Fatalf
	} else if testing.Short() {
		t.Skip("builds real engines: not under -short (make check); make test runs it")
	}
	if os.Getenv("TRT_ACTION_BACKEND_DIR") == "" {
		// `make` puts the backends in bin/lib; a test binary lives elsewhere.
		dir, err := filepath.Abs(filepath.Join("..", "bin", "lib"))
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("TRT_ACTION_BACKEND_DIR", dir)
	}
	so, err := ResolveBackend("tensorrt-rtx", rtxLibrary(""))
	if err != nil {
		skip("tensorrt-rtx backend: %v", err)
	}
	raw, err := BackendInfo(so, rtxLibrary(""))
	if err != nil || !strings.Contains(raw, `"error":""`) {
		skip("tensorrt-rtx library not loadable: %v %s", err, raw)
	}
	models = os.Getenv("TRT_ACTION_TEST_MODELS")
	if models == "" {
		models = filepath.Join("..", "testdata", "models")
	}
	if _, err := os.Stat(filepath.Join(models, "mlp.onnx")); err != nil {
		skip("test models: %v (run scripts/make-test-models)", err)
	}
	return so, models
}

// rtxLibrary is where a build finds the TensorRT-RTX library, as a
// worker decides it from trtLib (--trt-lib).
func rtxLibrary(trtLib string) backend.LibraryLocation {
	return backend.LocateLibrary(backend.Of(backend.TensorRTRTX), trtLib)
}

// runRTX builds req to the end, with the library a worker would use (its
// LibPath is --trt-lib, as in a worker's spec), draining as it goes;
// onEvent may cancel.
func runRTX(t *testing.T, so string, req Request, onEvent func(*Build, []trace.Event)) (Result, []trace.Event, []LogLine) {
	t.Helper()
	b, err := StartBackend(so, req.WithLibrary(rtxLibrary(req.LibPath)))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var events []trace.Event
	var logs []LogLine
	tick := time.NewTicker(100 * time.Microsecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-b.Done():
			done = true
		case <-tick.C:
		}
		events = b.Drain(events)
		logs = b.Logs(logs)
		if onEvent != nil {
			onEvent(b, events)
		}
	}
	return b.Result(), events, logs
}

// checkNesting asserts every phase finishes, under a parent that is running.
func checkNesting(t *testing.T, events []trace.Event) (depth int) {
	t.Helper()
	running := map[string]int{} // phase -> depth
	for _, ev := range events {
		switch ev.Kind {
		case trace.Start:
			d := 1
			if ev.Parent != "" {
				pd, ok := running[ev.Parent]
				if !ok {
					t.Fatalf("phase %q started under %q, which is not running", ev.Phase, ev.Parent)
				}
				d = pd + 1
			}
			running[ev.Phase] = d
			depth = max(depth, d)
		case trace.Finish:
			delete(running, ev.Phase)
		}
	}
	if len(running) != 0 {
		t.Fatalf("phases never finished: %v", running)
	}
	return depth
}

func TestRTXBuildsRealEngines(t *testing.T) {
	so, models := rtxOrSkip(t)
	for _, tc := range []struct {
		model string
		req   Request
	}{
		{"mlp.onnx", Request{}},
		{"cnn.onnx", Request{Targets: []string{"sm86", "sm120"}, Settings: map[string]any{"memory-pools": map[string]int64{"workspace": 64 << 20}}}},
		{"dynamic.onnx", Request{Profiles: []map[string]Shape{{"input": {Min: []int64{1, 64}, Opt: []int64{4, 64}, Max: []int64{16, 64}}}}}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			req := tc.req
			req.Name, req.ONNX = tc.model, filepath.Join(models, tc.model)
			req.EngineTmp = filepath.Join(t.TempDir(), "engine.tmp")
			res, events, logs := runRTX(t, so, req, nil)
			if res.Status != OK {
				t.Fatalf("status %v: %s", res.Status, res.Err)
			}
			st, err := os.Stat(req.EngineTmp)
			if err != nil {
				t.Fatalf("engine: %v", err)
			}
			if st.Size() < 1024 {
				t.Fatalf("engine is only %d bytes", st.Size())
			}
			if len(events) < 20 || events[0].Kind != trace.Start || events[0].Parent != "" {
				t.Fatalf("want a root phase first and many callbacks; got %d events starting %+v", len(events), events[0])
			}
			if d := checkNesting(t, events); d < 4 {
				t.Errorf("phase tree depth %d; TensorRT-RTX nests at least 4 deep", d)
			}
			if len(logs) == 0 {
				t.Error("no log lines forwarded")
			}
		})
	}
}

// Each profile of a request is one optimization profile of the engine, in
// order: two profiles build another engine than the first alone, and the
// same two in the other order another again (profile i is the engine's
// index i). test/realbuild checks the bytes against TensorRT-RTX's Python API.
func TestRTXBuildsOneProfilePerItem(t *testing.T) {
	so, models := rtxOrSkip(t)
	small := map[string]Shape{"input": {Min: []int64{1, 64}, Opt: []int64{2, 64}, Max: []int64{4, 64}}}
	large := map[string]Shape{"input": {Min: []int64{4, 64}, Opt: []int64{8, 64}, Max: []int64{16, 64}}}
	build := func(profiles ...map[string]Shape) []byte {
		t.Helper()
		req := Request{Name: "dynamic", ONNX: filepath.Join(models, "dynamic.onnx"), EngineTmp: filepath.Join(t.TempDir(), "e"), Profiles: profiles}
		if res, _, _ := runRTX(t, so, req, nil); res.Status != OK {
			t.Fatalf("%d profiles: status %v: %s", len(profiles), res.Status, res.Err)
		}
		plan, err := os.ReadFile(req.EngineTmp)
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	one, two, again, swapped := build(small), build(small, large), build(small, large), build(large, small)
	if !bytes.Equal(two, again) {
		t.Fatal("the same two profiles built two engines: nothing below can be compared")
	}
	if bytes.Equal(one, two) {
		t.Error("the second profile did not change the engine")
	}
	if bytes.Equal(two, swapped) {
		t.Error("the profiles' order did not change the engine")
	}
}

func TestRTXCancelFromStepComplete(t *testing.T) {
	so, models := rtxOrSkip(t)
	req := Request{Name: "cnn", ONNX: filepath.Join(models, "cnn.onnx"), EngineTmp: filepath.Join(t.TempDir(), "engine.tmp")}
	res, events, _ := runRTX(t, so, req, func(b *Build, events []trace.Event) {
		if len(events) > 0 {
			b.Cancel() // the next stepComplete returns false
		}
	})
	if res.Status != Cancelled || !strings.Contains(res.Err, "during the build") {
		t.Fatalf("status %v (%s); want cancelled during the build", res.Status, res.Err)
	}
	if _, err := os.Stat(req.EngineTmp); !os.IsNotExist(err) {
		t.Errorf("a cancelled build left %s (%v)", req.EngineTmp, err)
	}
	if len(events) == 0 || events[len(events)-1].Kind != trace.Finish {
		t.Errorf("want the phases closed after the cancel; last of %d events: %+v", len(events), events)
	}
}

func TestRTXRejectsModelNamingTheNode(t *testing.T) {
	so, models := rtxOrSkip(t)
	req := Request{Name: "rejected", ONNX: filepath.Join(models, "rejected.onnx"), EngineTmp: filepath.Join(t.TempDir(), "e")}
	res, events, _ := runRTX(t, so, req, nil)
	// One line, as every list in a build's reason: before, each refused
	// node had a line of its own, which one-line views showed as
	// "refused rejected.onnx   node 0".
	want := "the ONNX parser refused " + req.ONNX + `: node 0 "unique_values" (Unique): `
	if res.Status != Failed || !strings.HasPrefix(res.Err, want) || strings.Contains(res.Err, "\n") {
		t.Fatalf("status %v (%q); want a one-line failure starting %q", res.Status, res.Err, want)
	}
	if len(events) != 0 {
		t.Errorf("a refused model still produced %d callbacks", len(events))
	}
}

func TestRTXRequestErrors(t *testing.T) {
	so, models := rtxOrSkip(t)
	dyn := filepath.Join(models, "dynamic.onnx")
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"dynamic input without shape", Request{ONNX: dyn}, `input "input" has a dynamic shape [-1,64]`},
		{"shape for unknown input", Request{ONNX: dyn, Profiles: []map[string]Shape{{"x": {Min: []int64{1, 64}, Opt: []int64{1, 64}, Max: []int64{1, 64}}}}},
			"shapes.x: the model has no input of that name; its inputs: input"},
		// Of several profiles, each is named as the matrix writes it.
		{"dynamic input missing from a profile", Request{ONNX: dyn, Profiles: []map[string]Shape{
			{"input": {Min: []int64{1, 64}, Opt: []int64{1, 64}, Max: []int64{2, 64}}}, {}}},
			`input "input" has a dynamic shape [-1,64] (-1 = dynamic); give profiles[1].input with min, opt and max`},
		{"unknown input in a later profile", Request{ONNX: dyn, Profiles: []map[string]Shape{
			{"input": {Min: []int64{1, 64}, Opt: []int64{1, 64}, Max: []int64{2, 64}}},
			{"input": {Min: []int64{2, 64}, Opt: []int64{4, 64}, Max: []int64{8, 64}}, "x": {Min: []int64{1}, Opt: []int64{1}, Max: []int64{1}}}}},
			"profiles[1].x: the model has no input of that name; its inputs: input"},
		{"fixed dimension in a later profile", Request{ONNX: dyn, Profiles: []map[string]Shape{
			{"input": {Min: []int64{1, 64}, Opt: []int64{1, 64}, Max: []int64{2, 64}}},
			{"input": {Min: []int64{2, 32}, Opt: []int64{4, 32}, Max: []int64{8, 32}}}}},
			`profiles[1].input: dimension 1 of "input" is fixed at 64`},
		{"precision", Request{ONNX: dyn, Precision: []string{"fp16"}}, "always strongly typed"},
		{"timing cache", Request{ONNX: dyn, TimingCache: "/tmp/x"}, "no timing cache"},
		{"unknown target", Request{ONNX: dyn, Targets: []string{"sm90"}}, `targets: "sm90" is unknown`},
		{"missing library", Request{ONNX: dyn, LibPath: "/nonexistent"}, "/nonexistent (from --trt-lib)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.EngineTmp = filepath.Join(t.TempDir(), "e")
			res, _, _ := runRTX(t, so, req, nil)
			if res.Status == OK || !strings.Contains(res.Err, tc.want) {
				t.Fatalf("status %v, err %q; want an error containing %q", res.Status, res.Err, tc.want)
			}
		})
	}
}
