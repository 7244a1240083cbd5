package pyhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The hook's own tests are Python unittest files in testdata/pytest (not
// embedded): they act as the supervisor (a SOCK_SEQPACKET server of their
// own) and run scripts with the folder Extract wrote first on PYTHONPATH.
//
//	test_*.py  the bootstrap, the wire format, and the patching and monitor
//	           against stand-ins for the bindings that cannot be installed
//	           here (testdata/pytest/fakes): any Python 3.7 or later;
//	           test_wheel.py, the wheel's .pth, .start and trt_action
//	           package in a throwaway venv: 3.8 or later (the wheel's
//	           Requires-Python)
//	rtx_*.py   real builds with TensorRT-RTX's Python bindings
//
// They need TRT_ACTION_SCRIPT_PYTHON, the builder-scripts venv that
// scripts/setup-tensorrt-rtx makes and prints (without it the first suite
// runs with python3 from PATH), and the models of scripts/make-test-models
// (TRT_ACTION_TEST_MODELS, default ../../testdata/models). Missing, they
// skip, except in CI (CI set, or TRT_ACTION_REQUIRE_RTX), where they fail.
// TRT_ACTION_TEST_PYTHONS may name more interpreters (separated by spaces)
// to run the first suite with; one older than 3.7 runs only the tests of
// what the bootstrap does there.

// inCI is CI set, or TRT_ACTION_REQUIRE_RTX (make test sets it): there a
// missing prerequisite is a failure, never a skip.
func inCI() bool {
	return os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_REQUIRE_RTX") != ""
}

func prerequisite(t *testing.T, format string, args ...any) {
	t.Helper()
	if inCI() {
		t.Fatalf("in CI, yet "+format, args...)
	}
	t.Skipf("skipped: "+format+" (run scripts/setup-tensorrt-rtx and make build, and export what the script prints)", args...)
}

func TestExtractWritesTheHookNotWritableByOthers(t *testing.T) {
	// A umask that would leave files group-writable: Extract's modes
	// must not depend on it.
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dir := t.TempDir()
	got, err := Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "py"); got != want {
		t.Fatalf("Extract returned %s, want %s", got, want)
	}
	var names []string
	err = fs.WalkDir(files, root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		info, err := os.Lstat(target)
		if err != nil {
			return err
		}
		want := fs.FileMode(0o644)
		if d.IsDir() {
			want = fs.ModeDir | 0o755
		} else {
			names = append(names, name)
			data, _ := files.ReadFile(name)
			disk, err := os.ReadFile(target)
			if err != nil {
				return err
			}
			if !bytes.Equal(data, disk) {
				t.Errorf("%s differs from the embedded file", target)
			}
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", target, info.Mode(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The bootstrap, and the package with its __init__.py (a directory
	// pattern in go:embed would have left out names starting with _).
	for _, want := range []string{"py/sitecustomize.py", "py/trt_action_hook/__init__.py", "py/trt_action_hook/session.py"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("%s is not in the hook (have %v)", want, names)
		}
	}
}

func TestExtractAgainReplacesTheFiles(t *testing.T) {
	dir := t.TempDir()
	py, err := Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	boot := filepath.Join(py, "sitecustomize.py")
	if err := os.WriteFile(boot, []byte("changed, and longer than nothing at all"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(boot, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(dir); err != nil {
		t.Fatal(err)
	}
	want, _ := files.ReadFile("py/sitecustomize.py")
	got, err := os.ReadFile(boot)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("a second Extract left %q", got)
	}
	if info, _ := os.Stat(boot); info.Mode().Perm() != 0o644 {
		t.Fatalf("a second Extract left mode %v", info.Mode())
	}
}

func TestExtractNeverFollowsALink(t *testing.T) {
	elsewhere := t.TempDir()
	victim := filepath.Join(elsewhere, "victim.py")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(dir string) error{
		"file": func(dir string) error {
			if err := os.Mkdir(filepath.Join(dir, "py"), 0o755); err != nil {
				return err
			}
			return os.Symlink(victim, filepath.Join(dir, "py", "sitecustomize.py"))
		},
		"folder": func(dir string) error {
			return os.Symlink(elsewhere, filepath.Join(dir, "py"))
		},
		"fifo": func(dir string) error {
			if err := os.Mkdir(filepath.Join(dir, "py"), 0o755); err != nil {
				return err
			}
			return syscall.Mkfifo(filepath.Join(dir, "py", "sitecustomize.py"), 0o644)
		},
	}
	for name, setUp := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := setUp(dir); err != nil {
				t.Fatal(err)
			}
			_, err := Extract(dir)
			if err == nil || !strings.Contains(err.Error(), "is in the way") {
				t.Fatalf("Extract: %v, want an error that something is in the way", err)
			}
			if data, _ := os.ReadFile(victim); string(data) != "keep me" {
				t.Fatalf("the link's target was written: %q", data)
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 1 {
				t.Fatalf("Extract wrote into the folder a link points at: %v", entries)
			}
		})
	}
}

func TestPythonHook(t *testing.T) {
	python := os.Getenv("TRT_ACTION_SCRIPT_PYTHON")
	if python == "" {
		var err error
		if python, err = exec.LookPath("python3"); err != nil {
			prerequisite(t, "no TRT_ACTION_SCRIPT_PYTHON and no python3 on PATH")
		}
	}
	pythons := append([]string{python}, strings.Fields(os.Getenv("TRT_ACTION_TEST_PYTHONS"))...)
	for _, python := range pythons {
		version, minor := pythonVersion(t, python)
		t.Run("python"+version, func(t *testing.T) {
			switch {
			case minor >= 8:
				runUnittest(t, python, "test_*.py", "")
			case minor == 7:
				// Every suite but test_wheel.py: pip does not install the
				// wheel on 3.7.
				runUnittest(t, python, "test_[!w]*.py", "")
			default:
				runUnittest(t, python, "", "test_bootstrap.Bootstrap.test_old_python_gets_a_line_and_the_programs_sitecustomize",
					"test_bootstrap.Bootstrap.test_without_a_supervisor_only_the_programs_sitecustomize_runs")
			}
		})
	}
}

func TestPythonHookRTX(t *testing.T) {
	if testing.Short() && !inCI() {
		t.Skip("builds real engines: not under -short (make check); make test runs it")
	}
	python := os.Getenv("TRT_ACTION_SCRIPT_PYTHON")
	if python == "" {
		prerequisite(t, "TRT_ACTION_SCRIPT_PYTHON is not set")
	}
	if out, err := exec.Command(python, "-c", "import tensorrt_rtx").CombinedOutput(); err != nil {
		prerequisite(t, "import tensorrt_rtx fails with %s: %v\n%s", python, err, out)
	}
	for _, m := range []string{"cnn.onnx", "dynamic.onnx", "slow.onnx"} {
		if _, err := os.Stat(filepath.Join(modelsDir(t), m)); err != nil {
			prerequisite(t, "test models: %v (run scripts/make-test-models)", err)
		}
	}
	runUnittest(t, python, "rtx_*.py", "")
}

func modelsDir(t *testing.T) string {
	dir := os.Getenv("TRT_ACTION_TEST_MODELS")
	if dir == "" {
		dir = filepath.Join("..", "..", "testdata", "models")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// pythonVersion is python's version, and its minor version (a Python 2
// counts as 3.0: only the old-Python tests run there).
func pythonVersion(t *testing.T, python string) (string, int) {
	out, err := exec.Command(python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])").Output()
	if err != nil {
		t.Fatalf("%s: %v", python, err)
	}
	version := strings.TrimSpace(string(out))
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		t.Fatalf("%s: version %q: %v", python, version, err)
	}
	if major < 3 {
		minor = 0
	}
	return version, minor
}

var (
	ranTests = regexp.MustCompile(`(?m)^Ran (\d+) tests? in `)
	passed   = regexp.MustCompile(`(?m)^OK$`)
)

// runUnittest runs the Python tests (a discovery pattern, or test names)
// against a fresh Extract, and fails on any failure, error or skip.
func runUnittest(t *testing.T, python, pattern string, names ...string) {
	t.Helper()
	hook, err := Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	suite, err := filepath.Abs(filepath.Join("testdata", "pytest"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-m", "unittest"}
	if pattern != "" {
		args = append(args, "discover", "-v", "-s", suite, "-t", suite, "-p", pattern)
	} else {
		args = append(args, "-v")
		args = append(args, names...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = suite
	cmd.Env = append(cleanEnv(),
		"TRT_ACTION_TEST_HOOK_DIR="+hook,
		"TRT_ACTION_TEST_MODELS="+modelsDir(t),
		// No __pycache__ in the source tree from the test files.
		"PYTHONDONTWRITEBYTECODE=1",
	)
	out, err := cmd.CombinedOutput()
	text := string(out)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %s: %v", python, strings.Join(args, " "), err)
	}
	// unittest ends with "OK" alone, or "OK (skipped=N)" if a test skipped,
	// which counts as a failure here.
	if err != nil || !passed.MatchString(text) {
		t.Fatalf("Python tests failed (%s, %s):\n%s", python, pattern+strings.Join(names, " "), text)
	}
	m := ranTests.FindStringSubmatch(text)
	if m == nil || m[1] == "0" {
		t.Fatalf("no Python test ran:\n%s", text)
	}
	t.Logf("%s: %s Python tests passed", python, m[1])
}

// cleanEnv is this process's environment without what would hook the test
// runner itself (go test run by trt-action) or point its scripts elsewhere.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		key, _, _ := strings.Cut(kv, "=")
		switch key {
		case "TRT_ACTION_SUPERVISOR", "TRT_ACTION_HOOK_DIR", "TRT_ACTION_ROUTE", "TRT_ACTION_NATIVE_DIR", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE":
			continue
		}
		env = append(env, kv)
	}
	return env
}
