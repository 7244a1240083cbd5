package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionAdviceFitsTheInstallation: the real binary, laid out as each
// way of installing it leaves it and with no backend beside it, says how
// it was installed, and its advice about the missing backends fits that:
// only a source checkout is told to run make or the set-up script (a
// wheel or a tarball ships neither), and pip install --target is told
// that pip left the backends out.
func TestVersionAdviceFitsTheInstallation(t *testing.T) {
	goMod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, exe string
		files     map[string]string
		installed string
		want, not []string
	}{
		{"pip into a venv", "venv/bin/trt-action", map[string]string{"venv/lib/python3.11/site-packages/trt_action-1.2.3.dist-info/METADATA": ""},
			"installed: with pip, in DIR/venv\n",
			[]string{"pip installs the backends with the binary, into DIR/venv/lib/trt-action", "pip install --force-reinstall trt-action"},
			[]string{"make", "scripts/", "--target"}},
		{"pip install --target", "target/bin/trt-action", map[string]string{"target/trt_action-1.2.3.dist-info/METADATA": ""},
			"installed: with pip install --target DIR/target, which leaves the backends out\n",
			[]string{"trt-action was installed with pip install --target (DIR/target), which leaves a wheel's data files out"},
			[]string{"make", "scripts/"}},
		{"a release tarball", "trt-action_v1_linux_amd64/trt-action",
			map[string]string{"trt-action_v1_linux_amd64/README.md": "", "trt-action_v1_linux_amd64/docs/commands.md": ""},
			"installed: from a release tarball, in DIR/trt-action_v1_linux_amd64\n",
			[]string{"the release tarball holds the backends in lib/ beside the binary (DIR/trt-action_v1_linux_amd64/lib)"},
			[]string{"make", "scripts/", "pip"}},
		{"a source checkout", "repo/bin/trt-action", map[string]string{"repo/go.mod": string(goMod)},
			"installed: built in a source checkout, DIR/repo\n",
			[]string{"build it with `make TRT10_INCLUDE=<folder holding NvInfer.h>`", "build it with `make` after `eval \"$(scripts/setup-tensorrt-rtx)\"`"},
			[]string{"pip"}},
		{"a binary on its own", "tools/trt-action", nil,
			"installed: a binary on its own, in DIR/tools\n",
			[]string{"a release keeps the backends in lib/ beside the binary: copy that folder along with it"},
			[]string{"make", "scripts/", "pip"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, exe := layOutInstall(t, binary, c.exe, c.files)
			cmd := command(dir, nil, "version")
			cmd.Path, cmd.Args[0] = exe, exe // the copy, not the binary under test where it was built
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("version: %v\n%s", err, out)
			}
			text := strings.ReplaceAll(string(out), dir, "DIR")
			if !strings.Contains(text, c.installed) {
				t.Errorf("version does not say %q:\n%s", c.installed, text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("version lacks %q:\n%s", w, text)
				}
			}
			for _, n := range c.not {
				if strings.Contains(text, n) {
					t.Errorf("version says %q, which this installation does not have:\n%s", n, text)
				}
			}
		})
	}
}

// TestLibraryAdviceFitsTheInstallation: with the real tensorrt-rtx backend
// beside the binary and no TensorRT-RTX library anywhere, what version
// and a build's reason say to do fits the installation: pip's extra for a
// pip install, the set-up script only in a source checkout, the library's
// wheel and the variable for a tarball. The build's reason comes from the
// backend, told the fix with the request (lib_fix).
func TestLibraryAdviceFitsTheInstallation(t *testing.T) {
	backends := os.Getenv("TRT_ACTION_BACKEND_DIR")
	if backends == "" {
		backends = filepath.Join(filepath.Dir(binary), "lib")
	}
	so := filepath.Join(backends, "libtam_rtx.so")
	if _, err := os.Stat(so); err != nil {
		if os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" || os.Getenv("CI") != "" {
			t.Fatalf("no libtam_rtx.so in %s, but this test must run here", backends)
		}
		t.Skipf("no libtam_rtx.so in %s (make builds it)", backends)
	}
	goMod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, exe, lib string
		files          map[string]string
		want, not      []string
	}{
		{"pip into a venv", "venv/bin/trt-action", "venv/lib/trt-action",
			map[string]string{"venv/lib/python3.11/site-packages/trt_action-1.2.3.dist-info/METADATA": ""},
			[]string{"`pip install \"trt-action[rtx]\"` (x86_64 only) into the Python environment trt-action is installed in (DIR/venv)"},
			[]string{"scripts/"}},
		{"a release tarball", "t/trt-action", "t/lib", map[string]string{"t/README.md": "", "t/docs/commands.md": ""},
			[]string{"`pip install tensorrt-rtx-cu12-libs`, then set TRT_ACTION_RTX_LIB to its tensorrt_rtx_libs folder"},
			[]string{"scripts/", "trt-action[rtx]"}},
		{"a source checkout", "repo/bin/trt-action", "repo/bin/lib", map[string]string{"repo/go.mod": string(goMod)},
			[]string{"`eval \"$(scripts/setup-tensorrt-rtx)\"`, which installs the PyPI wheel tensorrt-rtx-cu12-libs"},
			[]string{"trt-action[rtx]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, exe := layOutInstall(t, binary, c.exe, c.files)
			copyFile(t, so, filepath.Join(dir, c.lib, "libtam_rtx.so"), 0o644)
			writeFile(t, filepath.Join(dir, "work", "m.onnx"), "not a model")
			writeFile(t, filepath.Join(dir, "work", "trt-builds.yml"), "version: 1\nbuilds:\n  - {name: m, backend: tensorrt-rtx, onnx: m.onnx}\n")
			run := func(args ...string) string {
				// command's environment names neither TRT_ACTION_RTX_LIB,
				// TRT_ACTION_BACKEND_DIR nor LD_LIBRARY_PATH.
				cmd := command(filepath.Join(dir, "work"), nil, args...)
				cmd.Path, cmd.Args[0] = exe, exe
				out, _ := cmd.CombinedOutput()
				return strings.ReplaceAll(string(out), dir, "DIR")
			}
			version := run("version")
			run("build", "--report", "r.json")
			reason := strings.ReplaceAll(readReport(t, filepath.Join(dir, "work", "r.json")).Builds[0].Reason, dir, "DIR")
			for what, text := range map[string]string{"version": version, "the build's reason": reason} {
				if !strings.Contains(text, "cannot load the TensorRT-RTX library") {
					t.Errorf("%s does not say the library cannot be loaded:\n%s", what, text)
				}
				for _, w := range c.want {
					if !strings.Contains(text, w) {
						t.Errorf("%s lacks %q:\n%s", what, w, text)
					}
				}
				for _, n := range c.not {
					if strings.Contains(text, n) {
						t.Errorf("%s says %q, which this installation does not have:\n%s", what, n, text)
					}
				}
			}
		})
	}
}

// layOutInstall copies binary to exe (a path below a new folder, dir)
// beside files (path below dir: content), as an installation lays it out.
func layOutInstall(t *testing.T, binary, exe string, files map[string]string) (dir, exePath string) {
	t.Helper()
	dir, _ = filepath.EvalSymlinks(t.TempDir())
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	exePath = filepath.Join(dir, exe)
	copyFile(t, binary, exePath, 0o755)
	return dir, exePath
}
