package native

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/install"
)

// A backend's flavours are the compilations of native/backends/shim.cc
// (internal/backend lists them, with the shared object's name and the
// headers each is built with).

// missingHint says what to do about flavour f's shared object, which was
// not found, for how this trt-action was installed (internal/install), or
// why there is none for this platform.
func missingHint(be backend.Backend, f backend.Flavour) string {
	return f.MissingHint(be.Name, runtime.GOARCH, backendDirVar, installation())
}

// installation is how this trt-action was installed; a variable so tests
// can stand in each kind.
var installation = install.Current

// missingBackends says what to do about backend objects that were not
// found, for how this trt-action was installed; build is how a source
// checkout builds them.
func missingBackends(build string) string {
	in := installation()
	if in.Kind == install.Source {
		return build + "; or set " + backendDirVar + " to a folder holding them"
	}
	return in.MissingBackends(backendDirVar)
}

// backendDirVar names the folder searched first for backend shared objects.
const backendDirVar = "TRT_ACTION_BACKEND_DIR"

// probeBackend asks a backend shared object about itself and the TensorRT
// library it would load; a variable so tests can stand in for real objects.
var probeBackend = BackendInfo

// backendInfo is tam_backend_info's answer (see backends/shim.cc).
type backendInfo struct {
	Backend         string `json:"backend"`
	ABI             int    `json:"abi"`
	CompiledAgainst string `json:"compiled_against"`
	Library         string `json:"library"`
	LibraryPath     string `json:"library_path"`
	Error           string `json:"error"`
}

// BackendDirs lists where backend shared objects are looked for, in order:
// $TRT_ACTION_BACKEND_DIR, then lib/, ../lib/ and ../lib/trt-action/ beside
// the running executable (bin/lib in the work tree; /usr/local/lib/trt-action
// in the container image).
func BackendDirs() []string {
	var dirs []string
	if d := os.Getenv(backendDirVar); d != "" {
		dirs = append(dirs, d)
	}
	if exe, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		dir := filepath.Dir(exe)
		dirs = append(dirs,
			filepath.Join(dir, "lib"),
			filepath.Join(dir, "..", "lib"),
			filepath.Join(dir, "..", "lib", "trt-action"))
	}
	return dirs
}

// findFlavour returns the path of f's shared object, or "" when no search
// folder has it.
func findFlavour(f backend.Flavour, dirs []string) string {
	for _, d := range dirs {
		p := filepath.Join(d, f.File)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// compiledNewestFirst yields each of be's flavours whose shared object is
// in dirs, with its path, newest first: which one fits only loading the
// TensorRT library tells, and the newest is the likeliest. It looks for
// each as the walk reaches it.
func compiledNewestFirst(be backend.Backend, dirs []string) iter.Seq2[backend.Flavour, string] {
	return func(yield func(backend.Flavour, string) bool) {
		for i := len(be.Flavours) - 1; i >= 0; i-- {
			if p := findFlavour(be.Flavours[i], dirs); p != "" && !yield(be.Flavours[i], p) {
				return
			}
		}
	}
}

// SearchedDirs says where backend shared objects were looked for, naming
// TRT_ACTION_BACKEND_DIR also when it is not set: a binary copied without
// its lib/ folder needs to learn that the variable exists.
func SearchedDirs(dirs []string) string {
	env := os.Getenv(backendDirVar)
	if env == "" {
		return fmt.Sprintf("%s is not set; looked beside the binary in %s", backendDirVar, strings.Join(dirs, ", "))
	}
	return fmt.Sprintf("looked in %s=%s, then beside the binary in %s", backendDirVar, env, strings.Join(dirs[1:], ", "))
}

func notBuilt(be backend.Backend, f backend.Flavour, dirs []string) error {
	return fmt.Errorf("no %s backend: %s (for %s) was not found (%s); %s",
		be.Name, f.File, f.Product, SearchedDirs(dirs), missingHint(be, f))
}

// BackendFiles lists the shared objects a build on the backend named
// name may load, found where ResolveBackend looks, without loading any:
// every compiled flavour, newest first, since which one fits only loading
// the TensorRT library tells. A backend without flavours (the simulator)
// has none.
func BackendFiles(name string) []string {
	be, _ := backend.Lookup(name)
	var files []string
	for _, p := range compiledNewestFirst(be, BackendDirs()) {
		files = append(files, p)
	}
	return files
}

// ResolveBackend returns the shared object that builds for the backend
// named name. A backend with one flavour has one shared object; with
// several (tensorrt: 10.x and 11.x have different class layouts), it loads
// the TensorRT library at lib (backend.LocateLibrary) through each
// compiled flavour, newest first, and picks the one compiled for that
// library's major version. This loads TensorRT into the calling process,
// so call it where the build will run.
func ResolveBackend(name string, lib backend.LibraryLocation) (string, error) {
	be, ok := backend.Lookup(name)
	if !ok || len(be.Flavours) == 0 {
		var real []string
		for _, b := range backend.All() {
			if len(b.Flavours) > 0 {
				real = append(real, b.Name)
			}
		}
		return "", fmt.Errorf("backend %q has no shared object; the TensorRT backends are %s", name, strings.Join(real, " and "))
	}
	dirs := BackendDirs()
	if len(be.Flavours) == 1 {
		if p := findFlavour(be.Flavours[0], dirs); p != "" {
			return p, nil
		}
		return "", notBuilt(be, be.Flavours[0], dirs)
	}
	return resolveByLibrary(be, lib, dirs)
}

// HostLibrary is the monitor's host side as a shared object of its own
// (native/monitor.cc, built beside the backends): a builder script's Python
// process loads it, and the backend object of its bindings, from the folder
// NativeDir finds (internal/pyhook's _native.py).
const HostLibrary = "libtam_host.so"

// NativeDir returns the first folder where backends are looked for
// (BackendDirs) that holds HostLibrary: the folder to name in a builder
// script's TRT_ACTION_NATIVE_DIR, where the backend objects are too.
func NativeDir() (string, error) {
	dirs := BackendDirs()
	for _, d := range dirs {
		if st, err := os.Stat(filepath.Join(d, HostLibrary)); err == nil && st.Mode().IsRegular() {
			return filepath.Abs(d)
		}
	}
	return "", fmt.Errorf("no %s, which builder scripts need for the native monitor, was found (%s); %s",
		HostLibrary, SearchedDirs(dirs), missingBackends("build it with `make`"))
}

// resolveByLibrary picks, of be's compiled flavours, newest first, the one
// that can load the TensorRT library.
func resolveByLibrary(be backend.Backend, lib backend.LibraryLocation, dirs []string) (string, error) {
	var problems []string // one for each compiled flavour
	for f, p := range compiledNewestFirst(be, dirs) {
		info, err := probe(p, lib)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if info.Error == "" {
			return p, nil
		}
		problems = append(problems, fmt.Sprintf("%s (%s): %s", f.File, f.Product, info.Error))
	}
	if len(problems) == 0 { // none is compiled
		var files, setups []string
		for _, f := range be.Flavours {
			files = append(files, f.File)
			setups = append(setups, "`make "+f.HeadersVar+"=...`")
		}
		build := "build them with " + strings.Join(setups, " or ") + " (the folder holding NvInfer.h)"
		return "", fmt.Errorf("no %s backend: neither %s was found (%s); %s",
			be.Name, strings.Join(files, " nor "), SearchedDirs(dirs), missingBackends(build))
	}
	return "", fmt.Errorf("no compiled %s backend can use the %s library:\n%s", be.Name, be.Product, strings.Join(problems, "\n"))
}

func probe(soPath string, lib backend.LibraryLocation) (backendInfo, error) {
	var info backendInfo
	raw, err := probeBackend(soPath, lib)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal([]byte(raw), &info); err != nil {
		return info, fmt.Errorf("%s: unreadable tam_backend_info answer %q: %v", soPath, raw, err)
	}
	if info.ABI != backendABI {
		return info, fmt.Errorf("%s speaks backend ABI %d, this binary ABI %d; rebuild it with this binary", soPath, info.ABI, backendABI)
	}
	return info, nil
}

// backendABI is TAM_BACKEND_ABI in trtaction.h.
const backendABI = 3

// CompiledBackend describes one backend flavour for `trt-action version`.
type CompiledBackend struct {
	Name            string // backend name in a build matrix
	File            string // shared object file name
	Path            string // where it was found; "" when not built
	For             string // the flavour, e.g. "TensorRT 10.x"
	CompiledAgainst string // header version, e.g. "10.16.0.72"
	Library         string // version of the library it loads; "" when it cannot
	LibraryPath     string
	LibraryOrigin   string // where LibraryPath came from: "from TRT_ACTION_RTX_LIB"
	Problem         string // why it cannot build here; "" when it can
}

// Describe is the entry for `trt-action version`: one line, followed by
// the loader's own lines (each library it tried, and how to install one)
// when the backend cannot load its TensorRT library.
func (b CompiledBackend) Describe() string {
	if b.Path == "" {
		return fmt.Sprintf("%s: not found (%s)", b.File, b.Problem)
	}
	head := fmt.Sprintf("%s, compiled against %s", b.File, b.CompiledAgainst)
	if b.Problem != "" {
		return fmt.Sprintf("%s; cannot build here: %s", head, b.Problem)
	}
	return fmt.Sprintf("%s; library %s (%s, %s)", head, b.Library, b.LibraryPath, b.LibraryOrigin)
}

// CompiledBackends describes every backend flavour, in the registry's
// order: found or not, and whether it can load its TensorRT library, from
// where a build would (backend.LocateLibrary; trtLib is --trt-lib).
func CompiledBackends(trtLib string) []CompiledBackend {
	dirs := BackendDirs()
	var out []CompiledBackend
	for _, be := range backend.All() {
		lib := backend.LocateLibrary(be, trtLib)
		for _, f := range be.Flavours {
			out = append(out, describeFlavour(be, f, lib, dirs))
		}
	}
	return out
}

func describeFlavour(be backend.Backend, f backend.Flavour, lib backend.LibraryLocation, dirs []string) CompiledBackend {
	b := CompiledBackend{Name: be.Name, File: f.File, For: f.Product, Path: findFlavour(f, dirs), LibraryOrigin: lib.Origin()}
	if b.Path == "" {
		b.Problem = missingHint(be, f)
		return b
	}
	info, err := probe(b.Path, lib)
	switch {
	case errors.Is(err, errNoCgo):
		b.Problem = "this binary was built without cgo"
	case err != nil:
		b.Problem = err.Error()
	default:
		b.CompiledAgainst, b.Library, b.LibraryPath, b.Problem = info.CompiledAgainst, info.Library, info.LibraryPath, info.Error
	}
	return b
}
