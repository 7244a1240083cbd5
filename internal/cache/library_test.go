package cache

import (
	"debug/elf"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/backend"
)

// rtxLibDir is the folder of the TensorRT-RTX libraries `make test`
// installs (scripts/setup-tensorrt-rtx exports TRT_ACTION_RTX_LIB). Without
// it the test skips, except in CI (CI set, or TRT_ACTION_REQUIRE_RTX=1),
// where it fails.
func rtxLibDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TRT_ACTION_RTX_LIB")
	if dir == "" {
		home, _ := os.UserHomeDir()
		found, _ := filepath.Glob(filepath.Join(home, ".cache", "trt-action", "rtx-*", "lib"))
		if len(found) > 0 {
			dir = found[0]
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "libtensorrt_rtx.so.1")); dir == "" || err != nil {
		msg := "no TensorRT-RTX library (TRT_ACTION_RTX_LIB, or ~/.cache/trt-action/rtx-*/lib from scripts/setup-tensorrt-rtx)"
		if os.Getenv("TRT_ACTION_REQUIRE_RTX") == "1" || os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// sectionBuildID reads the build-id another way than libraryIdentity
// does: from the section, not the program headers' notes.
func sectionBuildID(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		t.Fatalf("%s has no .note.gnu.build-id section", path)
	}
	data, err := s.Data()
	if err != nil || len(data) < 16 {
		t.Fatalf("%s: build-id section: %v", path, err)
	}
	// namesz 4, descsz, type 3, "GNU\0", then the id.
	return hex.EncodeToString(data[16:])
}

func TestLibraryIdentityOfTensorRTRTX(t *testing.T) {
	dir := rtxLibDir(t)
	want := "libtensorrt_rtx.so.1 gnu-build-id " + sectionBuildID(t, filepath.Join(dir, "libtensorrt_rtx.so.1")) +
		"; libtensorrt_onnxparser_rtx.so.1 gnu-build-id " + sectionBuildID(t, filepath.Join(dir, "libtensorrt_onnxparser_rtx.so.1"))
	for name, libPath := range map[string]string{
		"folder": dir, "file": filepath.Join(dir, "libtensorrt_rtx.so.1"), "unversioned link": filepath.Join(dir, "libtensorrt_rtx.so"),
	} {
		if _, err := os.Lstat(libPath); err != nil {
			continue // the link is the set-up script's; a bare wheel has none
		}
		got, err := libraryIdentity("tensorrt-rtx", libPath)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s: identity %q, want %q", name, got, want)
		}
	}
	t.Setenv("TRT_ACTION_RTX_LIB", dir)
	if got, err := libraryIdentity("tensorrt-rtx", ""); err != nil || got != want {
		t.Errorf("from TRT_ACTION_RTX_LIB: %q, %v; want %q", got, err, want)
	}
}

// useLoader stands s in for the machine's loader search for one test.
func useLoader(t *testing.T, s loaderSearch) {
	t.Helper()
	saved := systemLoader
	systemLoader = func() loaderSearch { return s }
	t.Cleanup(func() { systemLoader = saved })
}

func TestLibraryIdentityUnknown(t *testing.T) {
	t.Setenv("TRT_ACTION_RTX_LIB", "")
	t.Setenv("TRT_ACTION_TRT_LIB", "")
	useLoader(t, loaderSearch{defaults: []string{t.TempDir()}})
	for _, backend := range []string{"tensorrt", "tensorrt-rtx"} {
		_, err := libraryIdentity(backend, "")
		var unknown *LibraryUnknownError
		if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "search path") {
			t.Errorf("%s without a location: %v, want a LibraryUnknownError naming the search path", backend, err)
		}
	}
	empty := t.TempDir()
	if _, err := libraryIdentity("tensorrt", empty); !isLibraryUnknown(err) || !strings.Contains(err.Error(), "libnvinfer.so.10") {
		t.Errorf("a folder without the library: %v", err)
	}
	if id, err := libraryIdentity("sim", ""); err != nil || id != backend.Sim {
		t.Errorf("sim: %q, %v", id, err)
	}
}

// TestLibraryIdentityWithoutBuildID falls back to the content's SHA-256,
// and names both majors when a folder holds both (only loading would say
// which one a backend takes).
func TestLibraryIdentityWithoutBuildID(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"libnvinfer.so.10", "libnvonnxparser.so.10"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("not ELF: "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := libraryIdentity("tensorrt", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^libnvinfer\.so\.10 sha256 [0-9a-f]{64}; libnvonnxparser\.so\.10 sha256 [0-9a-f]{64}$`).MatchString(got) {
		t.Errorf("identity %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "libnvinfer.so.11"), []byte("eleven"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "libnvonnxparser.so.11"), []byte("eleven parser"), 0o644); err != nil {
		t.Fatal(err)
	}
	both, err := libraryIdentity("tensorrt", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"libnvinfer.so.10", "libnvinfer.so.11", "libnvonnxparser.so.10", "libnvonnxparser.so.11"} {
		if !strings.Contains(both, name+" sha256 ") {
			t.Errorf("identity %q does not name %s", both, name)
		}
	}
	// A file of a known major takes only that major's parser.
	if one, err := libraryIdentity("tensorrt", filepath.Join(dir, "libnvinfer.so.10")); err != nil || strings.Contains(one, ".so.11") {
		t.Errorf("libnvinfer.so.10 named: %q, %v", one, err)
	}
	if err := os.Remove(filepath.Join(dir, "libnvonnxparser.so.10")); err != nil {
		t.Fatal(err)
	}
	useLoader(t, loaderSearch{defaults: []string{t.TempDir()}})
	if _, err := libraryIdentity("tensorrt", filepath.Join(dir, "libnvinfer.so.10")); !isLibraryUnknown(err) || !strings.Contains(err.Error(), "parser") {
		t.Errorf("no parser beside the library nor on the search path: %v", err)
	}
	// The backend then asks the loader for the parser by name: so does the key.
	elsewhere := t.TempDir()
	writeLibs(t, elsewhere, "libnvonnxparser.so.10")
	useLoader(t, loaderSearch{libraryPath: elsewhere})
	if one, err := libraryIdentity("tensorrt", filepath.Join(dir, "libnvinfer.so.10")); err != nil ||
		!strings.HasSuffix(one, "; "+identityOf(t, filepath.Join(elsewhere, "libnvonnxparser.so.10"))) {
		t.Errorf("parser on the search path: %q, %v", one, err)
	}
}

// isLibraryUnknown reports whether err says a library cannot be named
// without loading it.
func isLibraryUnknown(err error) bool {
	var e *LibraryUnknownError
	return errors.As(err, &e)
}

// pipInstalled makes a Python environment under a new prefix as
// `pip install trt-action[rtx]` leaves it (trt-action's dist-info, the
// tensorrt_rtx_libs folder holding stand-in libraries whose content names
// their path) and makes it the one the library lookup sees, as if the
// binary ran from its bin/. It returns the wheel folder.
func pipInstalled(t *testing.T) string {
	t.Helper()
	prefix := t.TempDir()
	site := filepath.Join(prefix, "lib", "python3.11", "site-packages")
	libs := filepath.Join(site, "tensorrt_rtx_libs")
	for _, dir := range []string{filepath.Join(prefix, "bin"), filepath.Join(site, "trt_action-1.0.0.dist-info"), libs} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeLibs(t, libs, "libtensorrt_rtx.so.1", "libtensorrt_onnxparser_rtx.so.1")
	exe := filepath.Join(prefix, "bin", "trt-action")
	saved := locateLibrary
	locateLibrary = func(b backend.Backend, trtLib string) backend.LibraryLocation {
		return backend.LocateLibraryFor(b, trtLib, exe)
	}
	t.Cleanup(func() { locateLibrary = saved })
	return libs
}

// With neither --trt-lib nor the variable, the key names the library in
// trt-action's Python environment: the file a build loads from there.
func TestLibraryFilesFromThePythonEnvironment(t *testing.T) {
	t.Setenv("TRT_ACTION_RTX_LIB", "")
	useLoader(t, loaderSearch{defaults: []string{t.TempDir()}})
	libs := pipInstalled(t)
	want := []string{filepath.Join(libs, "libtensorrt_rtx.so.1"), filepath.Join(libs, "libtensorrt_onnxparser_rtx.so.1")}
	files, err := LibraryFiles("tensorrt-rtx", "")
	if err != nil || !slices.Equal(files, want) {
		t.Fatalf("LibraryFiles = %q, %v; want %q", files, err, want)
	}
	id, err := libraryIdentity("tensorrt-rtx", "")
	if err != nil || id != identityOf(t, want[0])+"; "+identityOf(t, want[1]) {
		t.Errorf("identity %q, %v; want the environment's files' identities", id, err)
	}

	// The variable still wins, as in a build.
	other := t.TempDir()
	writeLibs(t, other, "libtensorrt_rtx.so.1", "libtensorrt_onnxparser_rtx.so.1")
	t.Setenv("TRT_ACTION_RTX_LIB", other)
	if files, err := LibraryFiles("tensorrt-rtx", ""); err != nil || files[0] != filepath.Join(other, "libtensorrt_rtx.so.1") {
		t.Errorf("with TRT_ACTION_RTX_LIB: %q, %v; want its folder's files", files, err)
	}
}

// A run's hasher remembers a library by where it is, so each environment's
// file gets its own identity (and the same file is hashed once).
func TestHasherEnvRemembersTheLibraryByItsLocation(t *testing.T) {
	t.Setenv("TRT_ACTION_RTX_LIB", "")
	useLoader(t, loaderSearch{defaults: []string{t.TempDir()}})
	h := NewHasher()
	first := pipInstalled(t)
	a, err := h.Env("tensorrt-rtx", "", "")
	if err != nil || !strings.Contains(a.Library, identityOf(t, filepath.Join(first, "libtensorrt_rtx.so.1"))) {
		t.Fatalf("Env = %+v, %v; want the first environment's library", a, err)
	}
	second := pipInstalled(t)
	b, err := h.Env("tensorrt-rtx", "", "")
	if err != nil || !strings.Contains(b.Library, identityOf(t, filepath.Join(second, "libtensorrt_rtx.so.1"))) || a == b {
		t.Errorf("Env = %+v, %v; want the second environment's library, not the first's remembered", b, err)
	}
}

// Without the library anywhere, the reason says the environment was looked
// in too.
func TestLibraryUnknownNamesTheEnvironment(t *testing.T) {
	t.Setenv("TRT_ACTION_RTX_LIB", "")
	useLoader(t, loaderSearch{defaults: []string{t.TempDir()}})
	libs := pipInstalled(t)
	if err := os.Remove(filepath.Join(libs, "libtensorrt_rtx.so.1")); err != nil {
		t.Fatal(err)
	}
	_, err := LibraryFiles("tensorrt-rtx", "")
	if !isLibraryUnknown(err) || !strings.Contains(err.Error(), "trt-action's Python environment (when pip-installed) has no tensorrt_rtx_libs folder holding it") {
		t.Errorf("err = %v; want it to name the environment's folder", err)
	}
}
