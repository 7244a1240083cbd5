package native

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/install"
)

// backendDir makes a backend folder holding the named (empty) shared
// objects and points TRT_ACTION_BACKEND_DIR at it.
func backendDir(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TRT_ACTION_BACKEND_DIR", dir)
	return dir
}

// installedAs makes the tests' trt-action an installation of kind kind
// rooted at root, for the messages that depend on it.
func installedAs(t *testing.T, kind install.Kind, root string) {
	t.Helper()
	old := installation
	installation = func() install.Installation { return install.Installation{Kind: kind, Root: root} }
	t.Cleanup(func() { installation = old })
}

// fakeProbe answers tam_backend_info per shared object file name.
func fakeProbe(t *testing.T, answers map[string]string) *[]string {
	t.Helper()
	var calls []string
	old := probeBackend
	probeBackend = func(soPath string, lib backend.LibraryLocation) (string, error) {
		calls = append(calls, filepath.Base(soPath)+"|"+lib.Path)
		a, ok := answers[filepath.Base(soPath)]
		if !ok {
			return "", errors.New("unexpected probe of " + soPath)
		}
		return a, nil
	}
	t.Cleanup(func() { probeBackend = old })
	return &calls
}

const (
	info11Mismatch = `{"backend":"tensorrt","abi":3,"compiled_against":"11.1.0.106","library":"10.16.0.72","library_path":"/usr/lib/libnvinfer.so.10","error":"/usr/lib/libnvinfer.so.10 is TensorRT 10.16.0.72, but this backend (tensorrt) was compiled for TensorRT 11.x"}`
	info10OK       = `{"backend":"tensorrt","abi":3,"compiled_against":"10.16.0.72","library":"10.16.0.72","library_path":"/usr/lib/libnvinfer.so.10","error":""}`
	info10Missing  = `{"backend":"tensorrt","abi":3,"compiled_against":"10.16.0.72","library":"","library_path":"","error":"cannot load the TensorRT library; tried libnvinfer.so.10 (on the library search path): not found. To fix: install it"}`
)

func TestResolveRTX(t *testing.T) {
	dir := backendDir(t, "libtam_rtx.so")
	got, err := ResolveBackend("tensorrt-rtx", backend.LibraryLocation{})
	if err != nil || got != filepath.Join(dir, "libtam_rtx.so") {
		t.Fatalf("ResolveBackend = %q, %v; want the .so in %s", got, err, dir)
	}
}

func TestResolveRTXNotFound(t *testing.T) {
	dir := backendDir(t, "libtam_trt10.so")
	installedAs(t, install.Alone, "/p")
	_, err := ResolveBackend("tensorrt-rtx", backend.LibraryLocation{})
	if err == nil {
		t.Fatal("want an error without libtam_rtx.so")
	}
	for _, want := range []string{"no tensorrt-rtx backend: libtam_rtx.so (for TensorRT-RTX 1.x) was not found",
		"looked in TRT_ACTION_BACKEND_DIR=" + dir + ", then beside the binary in ",
		"copy that folder along with it, or set TRT_ACTION_BACKEND_DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %q", err, want)
		}
	}
}

// A binary copied without its lib/ folder must learn that the variable exists.
func TestNotFoundNamesTheBackendDirVariableWhenUnset(t *testing.T) {
	t.Setenv("TRT_ACTION_BACKEND_DIR", "")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	for _, name := range []string{"tensorrt-rtx", "tensorrt"} {
		_, err := ResolveBackend(name, backend.LibraryLocation{})
		if err == nil {
			t.Fatalf("%s: want an error: the test binary has no lib/ beside it", name)
		}
		want := "TRT_ACTION_BACKEND_DIR is not set; looked beside the binary in " + filepath.Join(filepath.Dir(exe), "lib")
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v\nwant it to contain %q", name, err, want)
		}
	}
}

func TestNativeDirIsTheFolderOfTheHostLibrary(t *testing.T) {
	dir := backendDir(t, HostLibrary, "libtam_rtx.so")
	got, err := NativeDir()
	if err != nil || got != dir {
		t.Fatalf("NativeDir = %q, %v; want %s", got, err, dir)
	}
	dir = backendDir(t, "libtam_rtx.so")
	_, err = NativeDir()
	for _, want := range []string{"no libtam_host.so, which builder scripts need for the native monitor, was found",
		"looked in TRT_ACTION_BACKEND_DIR=" + dir + ", then beside the binary in "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %q", err, want)
		}
	}
}

func TestResolveTensorRTPicksTheMajorOfTheLoadedLibrary(t *testing.T) {
	dir := backendDir(t, "libtam_trt10.so", "libtam_trt11.so")
	calls := fakeProbe(t, map[string]string{"libtam_trt11.so": info11Mismatch, "libtam_trt10.so": info10OK})
	got, err := ResolveBackend("tensorrt", backend.LocateLibrary(backend.Of(backend.TensorRT), "/opt/trt/lib"))
	if err != nil || got != filepath.Join(dir, "libtam_trt10.so") {
		t.Fatalf("ResolveBackend = %q, %v; want libtam_trt10.so", got, err)
	}
	want := []string{"libtam_trt11.so|/opt/trt/lib", "libtam_trt10.so|/opt/trt/lib"}
	if strings.Join(*calls, ",") != strings.Join(want, ",") {
		t.Fatalf("probes = %v, want %v (newest first, with the --trt-lib path)", *calls, want)
	}
}

func TestResolveTensorRTStopsAtTheFirstFit(t *testing.T) {
	backendDir(t, "libtam_trt10.so", "libtam_trt11.so")
	calls := fakeProbe(t, map[string]string{
		"libtam_trt11.so": strings.Replace(info10OK, "10.16.0.72", "11.1.0.106", -1),
	})
	got, err := ResolveBackend("tensorrt", backend.LibraryLocation{})
	if err != nil || filepath.Base(got) != "libtam_trt11.so" || len(*calls) != 1 {
		t.Fatalf("ResolveBackend = %q, %v after probes %v; want libtam_trt11.so after one probe", got, err, *calls)
	}
}

func TestResolveTensorRTReportsEveryFlavoursProblem(t *testing.T) {
	backendDir(t, "libtam_trt10.so", "libtam_trt11.so")
	fakeProbe(t, map[string]string{"libtam_trt11.so": info11Mismatch, "libtam_trt10.so": info10Missing})
	_, err := ResolveBackend("tensorrt", backend.LibraryLocation{})
	if err == nil {
		t.Fatal("want an error when no flavour fits")
	}
	for _, want := range []string{"libtam_trt11.so (TensorRT 11.x): /usr/lib/libnvinfer.so.10 is TensorRT 10.16.0.72",
		"libtam_trt10.so (TensorRT 10.x): cannot load the TensorRT library"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %q", err, want)
		}
	}
}

func TestResolveTensorRTNotBuilt(t *testing.T) {
	backendDir(t, "libtam_rtx.so")
	fakeProbe(t, nil)
	installedAs(t, install.Source, "/src/trt-action")
	_, err := ResolveBackend("tensorrt", backend.LibraryLocation{})
	if err == nil || !strings.Contains(err.Error(), "no tensorrt backend: neither libtam_trt10.so nor libtam_trt11.so was found") ||
		!strings.Contains(err.Error(), "set TRT_ACTION_BACKEND_DIR") || !strings.Contains(err.Error(), "TRT10_INCLUDE") {
		t.Fatalf("err = %v; want it to say the backend was not found, where to put it and how to build it", err)
	}
}

func TestResolveRefusesAnotherABI(t *testing.T) {
	backendDir(t, "libtam_trt10.so")
	fakeProbe(t, map[string]string{"libtam_trt10.so": strings.Replace(info10OK, `"abi":3`, `"abi":4`, 1)})
	_, err := ResolveBackend("tensorrt", backend.LibraryLocation{})
	if err == nil || !strings.Contains(err.Error(), "ABI 4, this binary ABI 3") {
		t.Fatalf("err = %v; want an ABI mismatch", err)
	}
}

func TestResolveUnknownBackend(t *testing.T) {
	backendDir(t)
	if _, err := ResolveBackend("sim", backend.LibraryLocation{}); err == nil || !strings.Contains(err.Error(), `"sim"`) {
		t.Fatalf("err = %v; want it to name the backend", err)
	}
}

func TestCompiledBackendsDescribesEachFlavour(t *testing.T) {
	dir := backendDir(t, "libtam_rtx.so", "libtam_trt10.so")
	installedAs(t, install.Source, "/src/trt-action")
	t.Setenv("TRT_ACTION_RTX_LIB", "/c")
	t.Setenv("TRT_ACTION_TRT_LIB", "")
	probes := fakeProbe(t, map[string]string{
		"libtam_rtx.so":   `{"backend":"tensorrt-rtx","abi":3,"compiled_against":"1.7.1.116","library":"1.7.1.116","library_path":"/c/libtensorrt_rtx.so.1","error":""}`,
		"libtam_trt10.so": info10Missing,
	})
	got := CompiledBackends("")
	if len(got) != 3 {
		t.Fatalf("got %d backends, want trt10, trt11, rtx", len(got))
	}
	want := []string{
		"libtam_trt10.so, compiled against 10.16.0.72; cannot build here: cannot load the TensorRT library; tried libnvinfer.so.10 (on the library search path): not found. To fix: install it",
		"libtam_trt11.so: not found (build it with `make TRT11_INCLUDE=<folder holding NvInfer.h>`; or set TRT_ACTION_BACKEND_DIR to a folder holding it)",
		"libtam_rtx.so, compiled against 1.7.1.116; library 1.7.1.116 (/c/libtensorrt_rtx.so.1, from TRT_ACTION_RTX_LIB)",
	}
	// Each is probed with the library a build of its backend would load.
	if want := []string{"libtam_trt10.so|", "libtam_rtx.so|/c"}; !slices.Equal(*probes, want) {
		t.Errorf("probes = %q, want %q", *probes, want)
	}
	for i, b := range got {
		if d := b.Describe(); d != want[i] {
			t.Errorf("backend %d (%s): Describe() = %q\nwant %q", i, b.Name, d, want[i])
		}
	}
	if got[2].Path != filepath.Join(dir, "libtam_rtx.so") || got[0].Name != "tensorrt" || got[1].Path != "" {
		t.Errorf("unexpected fields: %+v", got)
	}
}

func TestRTXHintOnArm64SaysThereIsNone(t *testing.T) {
	rtx := backend.Of(backend.TensorRTRTX)
	for _, kind := range []install.Kind{install.Source, install.Wheel, install.Tarball} {
		in := install.Installation{Kind: kind, Root: "/x"}
		got := rtx.Flavours[0].MissingHint(rtx.Name, "arm64", backendDirVar, in)
		if !strings.Contains(got, "x86_64 only") || !strings.Contains(got, "no tensorrt-rtx backend for arm64") || strings.Contains(got, "make") {
			t.Errorf("installed %v, the hint on arm64 = %q; want it to say TensorRT-RTX has no arm64 library", kind, got)
		}
	}
	in := install.Installation{Kind: install.Source, Root: "/x"}
	if got := rtx.Flavours[0].MissingHint(rtx.Name, "amd64", backendDirVar, in); !strings.Contains(got, "scripts/setup-tensorrt-rtx") {
		t.Errorf("the hint on amd64 in a checkout = %q; want how to build it", got)
	}
}

// TestBackendNotFoundAdviceFitsTheInstallation: what a message says about
// a backend object that was not found fits how trt-action was installed:
// only a source checkout is told to build it (make and the set-up script
// are not in a wheel or a tarball), a --target install is told pip left
// the backends out, a wheel where pip puts them, a tarball its lib/.
func TestBackendNotFoundAdviceFitsTheInstallation(t *testing.T) {
	for _, c := range []struct {
		kind      install.Kind
		want, not []string
	}{
		{install.Source, []string{"build it with `make` after `eval \"$(scripts/setup-tensorrt-rtx)\"`", "TRT_ACTION_BACKEND_DIR"}, []string{"pip"}},
		{install.Wheel, []string{"pip installs the backends with the binary, into /p/lib/trt-action", "pip install --force-reinstall trt-action"},
			[]string{"make", "scripts/", "--target"}},
		{install.WheelTarget, []string{"pip install --target (/p)", "leaves a wheel's data files out", "venv, --user or --prefix", "TRT_ACTION_BACKEND_DIR"},
			[]string{"make", "scripts/", "--force-reinstall"}},
		{install.Tarball, []string{"the release tarball holds the backends in lib/ beside the binary (/p/lib)", "TRT_ACTION_BACKEND_DIR"},
			[]string{"make", "scripts/", "pip"}},
		{install.Prefix, []string{"the backends belong in /p/lib/trt-action", "TRT_ACTION_BACKEND_DIR"}, []string{"make", "scripts/", "pip"}},
		{install.Alone, []string{"copy that folder along with it, or set TRT_ACTION_BACKEND_DIR"}, []string{"make", "scripts/", "pip"}},
	} {
		backendDir(t, "libtam_trt10.so")
		installedAs(t, c.kind, "/p")
		_, err := ResolveBackend("tensorrt-rtx", backend.LibraryLocation{})
		if err == nil {
			t.Fatal("want an error without libtam_rtx.so")
		}
		host := ""
		if _, herr := NativeDir(); herr != nil {
			host = herr.Error()
		}
		for what, text := range map[string]string{"ResolveBackend": err.Error(), "NativeDir": host} {
			if what == "NativeDir" && c.kind == install.Source {
				c.want = []string{"build it with `make`"}
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("installed %v: %s's error %q\nlacks %q", c.kind, what, text, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(text, n) {
					t.Errorf("installed %v: %s's error %q\nsays %q, which does not fit", c.kind, what, text, n)
				}
			}
		}
	}
}

// The shared objects a backend may load are found where ResolveBackend
// looks, without loading TensorRT: for tensorrt every flavour, as only
// loading the library tells which one a build takes.
func TestBackendFilesListsWhatABuildMayLoadWithoutLoadingIt(t *testing.T) {
	dir := backendDir(t, "libtam_rtx.so", "libtam_trt10.so", "libtam_trt11.so")
	probes := fakeProbe(t, nil)
	for backend, want := range map[string][]string{
		"tensorrt-rtx": {filepath.Join(dir, "libtam_rtx.so")},
		"tensorrt":     {filepath.Join(dir, "libtam_trt11.so"), filepath.Join(dir, "libtam_trt10.so")},
		"sim":          nil,
	} {
		if got := BackendFiles(backend); !slices.Equal(got, want) {
			t.Errorf("BackendFiles(%s) = %q, want %q", backend, got, want)
		}
	}
	if len(*probes) > 0 {
		t.Errorf("BackendFiles loaded backends: %q", *probes)
	}
}
