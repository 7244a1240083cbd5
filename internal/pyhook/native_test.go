package pyhook

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/native"
)

// The native route's Python tests (py/trt_action_hook/_native.py) are
// unittest files in testdata/native:
//
//	test_native.py  which backend serves which bindings, the reasons the
//	                route is refused, the pybind11 ABI ids tried: any Python
//	                3.7 or later, no TensorRT
//	rtx_native.py   real TensorRT-RTX builds through the built
//	                libtam_host.so and libtam_rtx.so (TRT_ACTION_BACKEND_DIR,
//	                default ../../bin/lib), with the builder-scripts venv of
//	                scripts/setup-tensorrt-rtx (TRT_ACTION_SCRIPT_PYTHON)
//	                and the models of scripts/make-test-models
//
// Missing prerequisites skip, except in CI (CI set, or
// TRT_ACTION_REQUIRE_RTX), where they fail.

// nativePython is the builder-scripts venv's Python, else python3 when any
// Python will do.
func nativePython(t *testing.T, anyWillDo bool) string {
	t.Helper()
	if p := os.Getenv("TRT_ACTION_SCRIPT_PYTHON"); p != "" {
		return p
	}
	if anyWillDo {
		if p, err := exec.LookPath("python3"); err == nil {
			return p
		}
	}
	prerequisite(t, "TRT_ACTION_SCRIPT_PYTHON is not set")
	return ""
}

// nativeFolder is the folder the environment variable names, else def
// (relative to this package), once it holds every one of files.
func nativeFolder(t *testing.T, variable, def, hint string, files ...string) string {
	t.Helper()
	dir := os.Getenv(variable)
	if dir == "" {
		dir = def
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			prerequisite(t, "%v (%s)", err, hint)
		}
	}
	return dir
}

var (
	nativeRan    = regexp.MustCompile(`(?m)^Ran (\d+) tests? in `)
	nativePassed = regexp.MustCompile(`(?m)^OK$`) // "OK (skipped=N)" is a failure here
)

// runNativeSuite runs the unittest files of testdata/native that pattern
// matches, with env added, and fails on any failure, error or skip.
func runNativeSuite(t *testing.T, python, pattern string, env ...string) {
	t.Helper()
	suite, err := filepath.Abs(filepath.Join("testdata", "native"))
	if err != nil {
		t.Fatal(err)
	}
	py, err := filepath.Abs("py")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-v", "-s", suite, "-t", suite, "-p", pattern)
	cmd.Dir = suite
	cmd.Env = append(cleanEnv(), append([]string{"TRT_ACTION_TEST_PY=" + py, "PYTHONDONTWRITEBYTECODE=1"}, env...)...)
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil || !nativePassed.MatchString(text) {
		t.Fatalf("Python tests failed (%s %s): %v\n%s", python, pattern, err, text)
	}
	m := nativeRan.FindStringSubmatch(text)
	if m == nil || m[1] == "0" {
		t.Fatalf("no Python test ran:\n%s", text)
	}
	t.Logf("%s: %s Python tests passed", pattern, m[1])
}

func TestNativeRouteChoices(t *testing.T) {
	runNativeSuite(t, nativePython(t, true), "test_*.py")
}

func TestNativeRouteRTX(t *testing.T) {
	if testing.Short() && !inCI() {
		t.Skip("builds real engines: not under -short (make check); make test runs it")
	}
	python := nativePython(t, false)
	if out, err := exec.Command(python, "-c", "import tensorrt_rtx").CombinedOutput(); err != nil {
		prerequisite(t, "import tensorrt_rtx fails with %s: %v\n%s", python, err, out)
	}
	libs := nativeFolder(t, "TRT_ACTION_BACKEND_DIR", filepath.Join("..", "..", "bin", "lib"), "make builds it",
		native.HostLibrary, backend.Of(backend.TensorRTRTX).Flavours[0].File)
	models := nativeFolder(t, "TRT_ACTION_TEST_MODELS", filepath.Join("..", "..", "testdata", "models"),
		"run scripts/make-test-models", "cnn.onnx", "mlp.onnx", "slow.onnx")
	runNativeSuite(t, python, "rtx_*.py", "TRT_ACTION_TEST_LIBS="+libs, "TRT_ACTION_TEST_MODELS="+models)
}

// TestNativeRouteNamesTheRegistrysFiles holds _native.py's table of backend
// objects to the backend registry, and its host library to native's.
func TestNativeRouteNamesTheRegistrysFiles(t *testing.T) {
	python := nativePython(t, true)
	py, err := filepath.Abs("py")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, "-c", `import json, sys
sys.path.insert(0, sys.argv[1])
from trt_action_hook import _native as n
print(json.dumps({"host": n.HOST_LIBRARY, "rtx": n.RTX_BACKEND, "trt": {str(k): v for k, v in n.TRT_BACKENDS.items()}}))`,
		py).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", python, err, out)
	}
	var got struct {
		Host, RTX string
		TRT       map[string]string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Host != native.HostLibrary {
		t.Errorf("_native.HOST_LIBRARY = %q, native.HostLibrary = %q", got.Host, native.HostLibrary)
	}
	want := map[string]string{}
	for _, f := range backend.Of(backend.TensorRT).Flavours {
		want[strconv.Itoa(f.Major)] = f.File
	}
	if !maps.Equal(got.TRT, want) {
		t.Errorf("_native.TRT_BACKENDS = %v, the registry's tensorrt flavours by major: %v", got.TRT, want)
	}
	if rtx := backend.Of(backend.TensorRTRTX).Flavours; len(rtx) != 1 || rtx[0].File != got.RTX {
		t.Errorf("_native.RTX_BACKEND = %q, the registry's tensorrt-rtx flavours: %v", got.RTX, rtx)
	}
}
