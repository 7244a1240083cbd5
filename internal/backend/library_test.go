package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layOut lays out files (empty) and links under root; a name ending in
// "/" is a folder, a value in links is a symbolic link's target.
func layOut(t *testing.T, root string, files []string, links map[string]string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, f)
		dir := p
		if f[len(f)-1] != '/' {
			dir = filepath.Dir(p)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if dir != p {
			if err := os.WriteFile(p, nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for link, target := range links {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
}

// where is l without its Fix: where the library is, not how to get it.
func where(l LibraryLocation) LibraryLocation {
	l.Fix = ""
	return l
}

// noVariables unsets the backends' variables, which a developer's shell
// (scripts/setup-tensorrt-rtx) sets.
func noVariables(t *testing.T) {
	for _, b := range All() {
		if b.Library.Variable != "" {
			t.Setenv(b.Library.Variable, "")
		}
	}
}

const (
	rtxSo       = "libtensorrt_rtx.so.1"
	ourDistInfo = "trt_action-1.2.3.dist-info/"
)

// TestLocateLibraryInThePythonEnvironment: pip's layouts, each with the
// trt-action binary in PREFIX/bin and the tensorrt-rtx-cu12-libs wheel's
// folder beside trt-action's dist-info.
func TestLocateLibraryInThePythonEnvironment(t *testing.T) {
	noVariables(t)
	rtx := Of(TensorRTRTX)
	for _, tc := range []struct {
		name  string
		files []string
		links map[string]string
		site  string // the folder, under PREFIX, that should hold the wheel folder found
	}{
		{name: "venv", site: "lib/python3.11/site-packages",
			files: []string{"bin/trt-action", "lib/python3.11/site-packages/" + ourDistInfo, "lib/python3.11/site-packages/tensorrt_rtx_libs/" + rtxSo}},
		{name: "venv whose lib64 links to lib", site: "lib/python3.12/site-packages",
			files: []string{"bin/trt-action", "lib/python3.12/site-packages/" + ourDistInfo, "lib/python3.12/site-packages/tensorrt_rtx_libs/" + rtxSo},
			links: map[string]string{"lib64": "lib"}},
		{name: "Debian's dist-packages (pip install into /usr/local)", site: "lib/python3.11/dist-packages",
			files: []string{"bin/trt-action", "lib/python3.11/dist-packages/" + ourDistInfo, "lib/python3.11/dist-packages/tensorrt_rtx_libs/" + rtxSo}},
		{name: "platlib in lib64 (Fedora's system Python)", site: "lib64/python3.9/site-packages",
			files: []string{"bin/trt-action", "lib/python3.9/site-packages/", "lib64/python3.9/site-packages/" + ourDistInfo,
				"lib64/python3.9/site-packages/tensorrt_rtx_libs/" + rtxSo}},
		{name: "pip install --target", site: ".",
			files: []string{"bin/trt-action", ourDistInfo, "tensorrt_rtx_libs/" + rtxSo}},
		{name: "a wheel folder without the library is skipped for one that has it", site: "lib/python3.10/site-packages",
			files: []string{"bin/trt-action",
				"lib/python3.12/site-packages/" + ourDistInfo, "lib/python3.12/site-packages/tensorrt_rtx_libs/__init__.py",
				"lib/python3.10/site-packages/" + ourDistInfo, "lib/python3.10/site-packages/tensorrt_rtx_libs/" + rtxSo}},
		{name: "the newest Python first (3.12 before 3.9)", site: "lib/python3.12/site-packages",
			files: []string{"bin/trt-action",
				"lib/python3.9/site-packages/" + ourDistInfo, "lib/python3.9/site-packages/tensorrt_rtx_libs/" + rtxSo,
				"lib/python3.12/site-packages/" + ourDistInfo, "lib/python3.12/site-packages/tensorrt_rtx_libs/" + rtxSo}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := t.TempDir()
			layOut(t, prefix, tc.files, tc.links)
			got := LocateLibraryFor(rtx, "", filepath.Join(prefix, "bin", "trt-action"))
			want := filepath.Join(prefix, tc.site, "tensorrt_rtx_libs")
			if got.Source != FromEnvironment || got.Path != want || got.Name != "tensorrt_rtx_libs" {
				t.Fatalf("LocateLibraryFor = %+v, want %s from the environment", got, want)
			}
			if o := got.Origin(); o != "from the Python environment's tensorrt_rtx_libs ("+want+")" {
				t.Errorf("Origin() = %q", o)
			}
		})
	}
}

// The environment is found from where the binary really is: a link to it
// elsewhere (~/bin) still finds the environment it was installed into.
func TestLocateLibraryFollowsALinkToTheBinary(t *testing.T) {
	noVariables(t)
	prefix, elsewhere := t.TempDir(), t.TempDir()
	layOut(t, prefix, []string{"bin/trt-action", "lib/python3.11/site-packages/" + ourDistInfo,
		"lib/python3.11/site-packages/tensorrt_rtx_libs/" + rtxSo}, nil)
	layOut(t, elsewhere, nil, map[string]string{"bin/trt-action": filepath.Join(prefix, "bin", "trt-action")})
	got := LocateLibraryFor(Of(TensorRTRTX), "", filepath.Join(elsewhere, "bin", "trt-action"))
	if want := filepath.Join(prefix, "lib/python3.11/site-packages/tensorrt_rtx_libs"); got.Path != want {
		t.Errorf("through a link: %+v, want %s", got, want)
	}
}

// Only the environment trt-action was pip-installed into is searched: a
// tarball's binary next to some unrelated Python's packages, a wheel
// folder without the library, and a backend whose library has no wheel
// (tensorrt) all fall to the loader's search path.
func TestLocateLibraryLooksNowhereElse(t *testing.T) {
	noVariables(t)
	for _, tc := range []struct {
		name    string
		backend string
		files   []string
	}{
		{"a Python without trt-action's dist-info", TensorRTRTX,
			[]string{"bin/trt-action", "lib/python3.11/site-packages/tensorrt_rtx_libs/" + rtxSo,
				"lib/python3.11/site-packages/other-1.0.dist-info/", "tensorrt_rtx_libs/" + rtxSo}},
		{"trt-action's dist-info in another Python's folder", TensorRTRTX,
			[]string{"bin/trt-action", "lib/python3.11/site-packages/" + ourDistInfo, "lib/python3.12/site-packages/tensorrt_rtx_libs/" + rtxSo}},
		{"a wheel folder without the library", TensorRTRTX,
			[]string{"bin/trt-action", "lib/python3.11/site-packages/" + ourDistInfo,
				"lib/python3.11/site-packages/tensorrt_rtx_libs/libtensorrt_onnxparser_rtx.so.1"}},
		{"the tensorrt backend", TensorRT,
			[]string{"bin/trt-action", "lib/python3.11/site-packages/" + ourDistInfo,
				"lib/python3.11/site-packages/tensorrt_libs/libnvinfer.so.10", "lib/python3.11/site-packages/tensorrt_rtx_libs/libnvinfer.so.10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := t.TempDir()
			layOut(t, prefix, tc.files, nil)
			got := LocateLibraryFor(Of(tc.backend), "", filepath.Join(prefix, "bin", "trt-action"))
			if where(got) != (LibraryLocation{}) || got.Origin() != "on the library search path" {
				t.Errorf("LocateLibraryFor = %+v, want the loader's search path", got)
			}
		})
	}
	if got := LocateLibraryFor(Of(TensorRTRTX), "", ""); where(got) != (LibraryLocation{}) {
		t.Errorf("with no executable known: %+v, want the loader's search path", got)
	}
}

// A location the user names wins over the environment, --trt-lib over the
// variable, also when it does not hold the library (the build then says
// so, rather than loading another).
func TestLocateLibraryNamedLocationsWin(t *testing.T) {
	noVariables(t)
	prefix := t.TempDir()
	layOut(t, prefix, []string{"bin/trt-action", "lib/python3.11/site-packages/" + ourDistInfo,
		"lib/python3.11/site-packages/tensorrt_rtx_libs/" + rtxSo}, nil)
	exe := filepath.Join(prefix, "bin", "trt-action")
	rtx := Of(TensorRTRTX)

	t.Setenv("TRT_ACTION_RTX_LIB", "/nowhere/rtx")
	got := LocateLibraryFor(rtx, "", exe)
	if where(got) != (LibraryLocation{Path: "/nowhere/rtx", Source: FromVariable, Name: "TRT_ACTION_RTX_LIB"}) ||
		got.Origin() != "from TRT_ACTION_RTX_LIB" || got.Setting() != "TRT_ACTION_RTX_LIB=/nowhere/rtx" {
		t.Errorf("with the variable: %+v", got)
	}
	got = LocateLibraryFor(rtx, "/flag/lib", exe)
	if where(got) != (LibraryLocation{Path: "/flag/lib", Source: FromFlag, Name: "--trt-lib"}) ||
		got.Origin() != "from --trt-lib" || got.Setting() != "--trt-lib=/flag/lib" {
		t.Errorf("with --trt-lib and the variable: %+v", got)
	}
	t.Setenv("TRT_ACTION_TRT_LIB", "/opt/trt")
	if got := LocateLibraryFor(Of(TensorRT), "", exe); got.Path != "/opt/trt" || got.Source != FromVariable {
		t.Errorf("tensorrt with TRT_ACTION_TRT_LIB: %+v", got)
	}
}

// Only tensorrt-rtx's library is published as a wheel trt-action looks
// for: the tensorrt backend finds NVIDIA's libraries as it always did.
func TestOnlyTensorRTRTXHasAWheelFolder(t *testing.T) {
	for _, b := range All() {
		want := ""
		if b.Name == TensorRTRTX {
			want = "tensorrt_rtx_libs"
		}
		if b.Library.WheelFolder != want {
			t.Errorf("%s: WheelFolder %q, want %q", b.Name, b.Library.WheelFolder, want)
		}
	}
}

// TestLibraryFixFitsTheInstallation: how to get TensorRT-RTX's library,
// which a build's or version's message ends with, fits how the binary at
// PREFIX/... was installed: pip's extra for a pip install (with --target
// for a target folder), the set-up script in a source checkout, the
// library's own wheel and the variable elsewhere; never a script or make
// where there is none. tensorrt's is the same everywhere.
func TestLibraryFixFitsTheInstallation(t *testing.T) {
	noVariables(t)
	for _, c := range []struct {
		name, exe string
		files     []string
		want, not []string
	}{
		{"venv", "bin/trt-action", []string{"bin/trt-action", "lib/python3.11/site-packages/" + ourDistInfo},
			[]string{"TRT_ACTION_RTX_LIB", "`pip install \"trt-action[rtx]\"` (x86_64 only) into the Python environment trt-action is installed in (PREFIX)"},
			[]string{"scripts/", "--target"}},
		{"pip install --target", "bin/trt-action", []string{"bin/trt-action", ourDistInfo},
			[]string{"TRT_ACTION_RTX_LIB", "`pip install --target PREFIX \"trt-action[rtx]\"`"}, []string{"scripts/"}},
		{"source checkout", "bin/trt-action", []string{"bin/trt-action", "go.mod"},
			[]string{"TRT_ACTION_RTX_LIB", "`eval \"$(scripts/setup-tensorrt-rtx)\"`, which installs the PyPI wheel tensorrt-rtx-cu12-libs"},
			[]string{"trt-action[rtx]"}},
		{"release tarball", "trt-action", []string{"trt-action", "README.md", "docs/commands.md", "lib/libtam_host.so"},
			[]string{"TRT_ACTION_RTX_LIB", "`pip install tensorrt-rtx-cu12-libs`, then set TRT_ACTION_RTX_LIB to its tensorrt_rtx_libs folder"},
			[]string{"scripts/", "trt-action[rtx]"}},
		{"a binary on its own", "trt-action", []string{"trt-action"},
			[]string{"TRT_ACTION_RTX_LIB", "`pip install tensorrt-rtx-cu12-libs`"}, []string{"scripts/", "trt-action[rtx]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			prefix := t.TempDir()
			layOut(t, prefix, c.files, nil)
			if c.name == "source checkout" {
				if err := os.WriteFile(filepath.Join(prefix, "go.mod"), []byte("module github.com/trt-action/trt-action\n\ngo 1.26\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			exe := filepath.Join(prefix, c.exe)
			fix := strings.ReplaceAll(LocateLibraryFor(Of(TensorRTRTX), "", exe).Fix, prefix, "PREFIX")
			for _, w := range c.want {
				if !strings.Contains(fix, w) {
					t.Errorf("the fix %q\nlacks %q", fix, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(fix, n) {
					t.Errorf("the fix %q\nsays %q, which does not fit", fix, n)
				}
			}
			if trt := LocateLibraryFor(Of(TensorRT), "", exe).Fix; trt != Of(TensorRT).Library.Install {
				t.Errorf("tensorrt's fix %q, want its Install %q whatever the installation", trt, Of(TensorRT).Library.Install)
			}
		})
	}
}
