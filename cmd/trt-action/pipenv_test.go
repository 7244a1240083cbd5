package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPipInstalledFindsTensorRTRTXInItsEnvironment: trt-action laid out as
// `pip install trt-action[rtx]` lays it out in a venv (the binary in
// PREFIX/bin, its backends in PREFIX/lib/trt-action, its dist-info and the
// tensorrt-rtx-cu12-libs wheel's tensorrt_rtx_libs folder in
// site-packages) finds the TensorRT-RTX library with no variable set and
// nothing on the loader's path: version names it, a real build loads it,
// and cache key identifies the same file. It needs the TensorRT-RTX
// set-up (TRT_ACTION_RTX_LIB, bin/lib/libtam_rtx.so); without it the test
// skips, except in CI (CI set, or TRT_ACTION_REQUIRE_RTX), where it fails.
func TestPipInstalledFindsTensorRTRTXInItsEnvironment(t *testing.T) {
	skip := t.Skipf
	if os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" || os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	rtxLib := os.Getenv("TRT_ACTION_RTX_LIB")
	backends := os.Getenv("TRT_ACTION_BACKEND_DIR")
	if backends == "" {
		backends = filepath.Join(filepath.Dir(binary), "lib")
	}
	models := filepath.Join("..", "..", "testdata", "models")
	for _, need := range []string{filepath.Join(rtxLib, "libtensorrt_rtx.so.1"), filepath.Join(backends, "libtam_rtx.so"), filepath.Join(models, "mlp.onnx")} {
		if _, err := os.Stat(need); rtxLib == "" || err != nil {
			skip("needs the TensorRT-RTX set-up (eval \"$(scripts/setup-tensorrt-rtx)\", make, scripts/make-test-models): %s: %v", need, err)
		}
	}

	prefix := t.TempDir()
	bin := filepath.Join(prefix, "bin", "trt-action")
	copyFile(t, binary, bin, 0o755)
	sos, _ := filepath.Glob(filepath.Join(backends, "*.so"))
	for _, so := range sos {
		copyFile(t, so, filepath.Join(prefix, "lib", "trt-action", filepath.Base(so)), 0o644)
	}
	site := filepath.Join(prefix, "lib", "python3.11", "site-packages")
	wheel := filepath.Join(site, "tensorrt_rtx_libs")
	for _, dir := range []string{filepath.Join(site, "trt_action-0.0.0.dist-info"), wheel} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, so := range []string{"libtensorrt_rtx.so.1", "libtensorrt_onnxparser_rtx.so.1"} {
		if err := os.Symlink(filepath.Join(rtxLib, so), filepath.Join(wheel, so)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir string, args ...string) (string, int) {
		t.Helper()
		// command's environment names neither TRT_ACTION_RTX_LIB,
		// TRT_ACTION_BACKEND_DIR nor LD_LIBRARY_PATH.
		cmd := command(dir, nil, args...)
		cmd.Path, cmd.Args[0] = bin, bin
		out, err := cmd.CombinedOutput()
		return string(out), exitCode(err)
	}

	out, code := run(prefix, "version")
	want := "; library 1."
	if i := strings.Index(out, "libtam_rtx.so, compiled against "); i < 0 || code != 0 ||
		!strings.Contains(out[i:], "("+filepath.Join(wheel, "libtensorrt_rtx.so.1")+", from the Python environment's tensorrt_rtx_libs ("+wheel+"))") {
		t.Fatalf("version exited %d:\n%s\nwant libtam_rtx.so from %s with the environment's library in %s", code, out, filepath.Join(prefix, "lib", "trt-action"), wheel)
	} else if !strings.Contains(out[i:], want) {
		t.Errorf("version: %s\nwant %q", out, want)
	}

	work := t.TempDir()
	copyFile(t, filepath.Join(models, "mlp.onnx"), filepath.Join(work, "mlp.onnx"), 0o644)
	writeFile(t, filepath.Join(work, "rtx.yml"), "version: 1\nbuilds:\n  - {name: rtx, backend: tensorrt-rtx, onnx: mlp.onnx}\n")
	if out, code := run(work, "build", "-f", "rtx.yml", "--report", "r.json"); code != 0 {
		t.Fatalf("build exited %d, want 0:\n%s", code, out)
	}
	if b := readReport(t, filepath.Join(work, "r.json")).Builds[0]; b.Status != "ok" {
		t.Errorf("build %+v, want ok", b)
	}
	if fi, err := os.Stat(filepath.Join(work, "rtx.engine")); err != nil || fi.Size() == 0 {
		t.Errorf("engine: %v", err)
	}

	// The key names the environment's library: the same key as with that
	// file named by --trt-lib, and as with the folder the links point at.
	fromEnv, code := run(work, "cache", "key", "-f", "rtx.yml")
	named, code2 := run(work, "cache", "key", "-f", "rtx.yml", "--trt-lib", filepath.Join(wheel, "libtensorrt_rtx.so.1"))
	real, code3 := run(work, "cache", "key", "-f", "rtx.yml", "--trt-lib", rtxLib)
	if code != 0 || code2 != 0 || code3 != 0 || fromEnv != named || fromEnv != real || !strings.HasPrefix(fromEnv, "trt-engines-") {
		t.Errorf("cache key from the environment %q (exit %d), naming its file %q (exit %d), its folder's target %q (exit %d): want one key",
			fromEnv, code, named, code2, real, code3)
	}
	// Without trt-action's dist-info the folder is some other Python's,
	// not searched: no library, so no key.
	if err := os.Remove(filepath.Join(site, "trt_action-0.0.0.dist-info")); err != nil {
		t.Fatal(err)
	}
	if out, code := run(work, "cache", "key", "-f", "rtx.yml"); code == 0 || !strings.Contains(out, "cannot be identified") {
		t.Errorf("cache key without trt-action's dist-info exited %d:\n%s\nwant the library unknown", code, out)
	}
}

// copyFile copies from to a new file to (its folders made) with mode.
func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
