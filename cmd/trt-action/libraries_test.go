package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyBinary puts the binary under test alone in a fresh folder, as a user
// who copied it without its lib/ folder would have it.
func copyBinary(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "trt-action")
	copyFile(t, binary, dst, 0o755)
	return dst
}

func TestBinaryWithoutItsLibFolderNamesTheBackendDirVariable(t *testing.T) {
	bin := copyBinary(t)
	dir := filepath.Dir(bin)
	cmd := command(dir, nil, "version")
	cmd.Path, cmd.Args[0] = bin, bin
	out, err := cmd.CombinedOutput()
	if exitCode(err) != 0 {
		t.Fatalf("version exited %d, want 0:\n%s", exitCode(err), out)
	}
	want := "backend folders: TRT_ACTION_BACKEND_DIR is not set; looked beside the binary in " + filepath.Join(dir, "lib")
	if !strings.Contains(string(out), "libtam_rtx.so: not found") || !strings.Contains(string(out), want) {
		t.Fatalf("version output:\n%s\nwant each backend not found and %q", out, want)
	}

	writeFile(t, filepath.Join(dir, "m.onnx"), "not a model")
	writeFile(t, filepath.Join(dir, "rtx.yml"), "version: 1\nbuilds:\n  - name: rtx\n    backend: tensorrt-rtx\n    onnx: m.onnx\n")
	cmd = command(dir, nil, "build", "-f", "rtx.yml", "--report", "r.json")
	cmd.Path, cmd.Args[0] = bin, bin
	out, err = cmd.CombinedOutput()
	if exitCode(err) != 1 {
		t.Fatalf("build exited %d, want 1 (the build failed):\n%s", exitCode(err), out)
	}
	reason := readReport(t, filepath.Join(dir, "r.json")).Builds[0].Reason
	for _, want := range []string{"libtam_rtx.so", "TRT_ACTION_BACKEND_DIR is not set", filepath.Join(dir, "lib")} {
		if !strings.Contains(reason, want) {
			t.Errorf("build reason %q\nwant it to contain %q", reason, want)
		}
	}
}

// `trt-action version` in a new shell, where the set-up script's exports
// are gone: it still lists the backends, says which library it could not
// load and which variable points at it, and exits 0.
func TestVersionWithoutTheLibraryVariableSaysWhatIsMissing(t *testing.T) {
	backends := os.Getenv("TRT_ACTION_BACKEND_DIR")
	if backends == "" {
		backends = filepath.Join(filepath.Dir(binary), "lib")
	}
	if _, err := os.Stat(filepath.Join(backends, "libtam_rtx.so")); err != nil {
		if os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" {
			t.Fatalf("no libtam_rtx.so in %s, but TRT_ACTION_REQUIRE_RTX is set", backends)
		}
		t.Skipf("no libtam_rtx.so in %s (make test builds it)", backends)
	}
	// command's environment has neither LD_LIBRARY_PATH nor TRT_ACTION_RTX_LIB.
	out, err := command(t.TempDir(), []string{"TRT_ACTION_BACKEND_DIR=" + backends}, "version").CombinedOutput()
	if exitCode(err) != 0 {
		t.Fatalf("version exited %d, want 0:\n%s", exitCode(err), out)
	}
	// One line, the list of what was tried written as every list of
	// paths is: before, "tried:" and a line per library, which a build's
	// one-line reason showed as "tried:   libtensorrt_rtx.so.1".
	const tried = "cannot load the TensorRT-RTX library; tried libtensorrt_rtx.so.1 (on the library search path): "
	const fix = ". To fix: set TRT_ACTION_RTX_LIB (or --trt-lib) to the folder holding libtensorrt_rtx.so.1"
	for _, want := range []string{"sim            built in", "libtam_rtx.so, compiled against 1.", tried, fix} {
		if !strings.Contains(string(out), want) {
			t.Errorf("version output:\n%s\nwant it to contain %q", out, want)
		}
	}

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.onnx"), "not a model")
	writeFile(t, filepath.Join(dir, "rtx.yml"), "version: 1\nbuilds:\n  - {name: rtx, backend: tensorrt-rtx, onnx: m.onnx}\n")
	out, err = command(dir, []string{"TRT_ACTION_BACKEND_DIR=" + backends}, "build", "-f", "rtx.yml", "--report", "r.json").CombinedOutput()
	if exitCode(err) != 1 {
		t.Fatalf("build exited %d, want 1 (the build failed):\n%s", exitCode(err), out)
	}
	reason := readReport(t, filepath.Join(dir, "r.json")).Builds[0].Reason
	if !strings.HasPrefix(reason, tried) || !strings.Contains(reason, fix) || strings.Contains(reason, "\n") || strings.Contains(reason, "  ") {
		t.Errorf("build reason %q\nwant one line starting %q, with %q", reason, tried, fix)
	}
}
