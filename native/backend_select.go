package native

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// A backend flavour is one compilation of native/backends/shim.cc.
type flavour struct {
	backend string // the name a build matrix uses
	file    string // the shared object's file name
	major   string // the TensorRT major version it was compiled for, for messages
	hint    string // how to build it
}

var (
	flavourRTX   = flavour{"tensorrt-rtx", "libtam_rtx.so", "TensorRT-RTX 1.x", rtxHint(runtime.GOARCH)}
	flavourTRT11 = flavour{"tensorrt", "libtam_trt11.so", "TensorRT 11.x",
		"build it with `make TRT11_INCLUDE=<folder holding NvInfer.h>`"}
	flavourTRT10 = flavour{"tensorrt", "libtam_trt10.so", "TensorRT 10.x",
		"build it with `make TRT10_INCLUDE=<folder holding NvInfer.h>`"}
)

// rtxHint says how to get the tensorrt-rtx backend on arch: NVIDIA publishes
// the TensorRT-RTX library (PyPI tensorrt-rtx-cu12-libs) for x86_64 only, so
// an arm64 build cannot have it.
func rtxHint(arch string) string {
	if arch != "amd64" {
		return "TensorRT-RTX is published for x86_64 only, so there is no tensorrt-rtx backend for " + arch
	}
	return "build it with `make` after `eval \"$(scripts/setup-tensorrt-rtx)\"`"
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
func findFlavour(f flavour, dirs []string) string {
	for _, d := range dirs {
		p := filepath.Join(d, f.file)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
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

// whereBackendsLive is the fix for a backend object that was not found.
const whereBackendsLive = "a release keeps the backends in lib/ beside the binary: copy that folder along with it, or set " +
	backendDirVar + " to the folder holding them"

func notBuilt(f flavour, dirs []string) error {
	return fmt.Errorf("no %s backend: %s (for %s) was not found (%s); %s; or %s",
		f.backend, f.file, f.major, SearchedDirs(dirs), whereBackendsLive, f.hint)
}

// BackendFiles lists the shared objects a build on backend may load,
// found where ResolveBackend looks, without loading any: for tensorrt
// every compiled flavour, since which one fits only loading the TensorRT
// library tells. The simulator is built in and has none.
func BackendFiles(backend string) []string {
	var flavours []flavour
	switch backend {
	case flavourRTX.backend:
		flavours = []flavour{flavourRTX}
	case "tensorrt":
		flavours = []flavour{flavourTRT11, flavourTRT10}
	}
	dirs := BackendDirs()
	var files []string
	for _, f := range flavours {
		if p := findFlavour(f, dirs); p != "" {
			files = append(files, p)
		}
	}
	return files
}

// ResolveBackend returns the shared object that builds for backend
// ("tensorrt-rtx" or "tensorrt"). For "tensorrt" it loads the TensorRT
// library (libPath, else the backend's default search) through each compiled
// flavour, newest first, and picks the one compiled for that library's major
// version: 10.x and 11.x have different class layouts. This loads TensorRT
// into the calling process, so call it where the build will run.
func ResolveBackend(backend, libPath string) (string, error) {
	dirs := BackendDirs()
	switch backend {
	case flavourRTX.backend:
		if p := findFlavour(flavourRTX, dirs); p != "" {
			return p, nil
		}
		return "", notBuilt(flavourRTX, dirs)
	case "tensorrt":
		return resolveTensorRT(libPath, dirs)
	}
	return "", fmt.Errorf("backend %q has no shared object; the TensorRT backends are tensorrt-rtx and tensorrt", backend)
}

func resolveTensorRT(libPath string, dirs []string) (string, error) {
	var problems []string
	compiled := 0
	for _, f := range []flavour{flavourTRT11, flavourTRT10} {
		p := findFlavour(f, dirs)
		if p == "" {
			continue
		}
		compiled++
		info, err := probe(p, libPath)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if info.Error == "" {
			return p, nil
		}
		problems = append(problems, fmt.Sprintf("%s (%s): %s", f.file, f.major, info.Error))
	}
	if compiled == 0 {
		return "", fmt.Errorf("no tensorrt backend: neither %s nor %s was found (%s); %s; "+
			"or build them with `make TRT10_INCLUDE=...` or `make TRT11_INCLUDE=...` (the folder holding NvInfer.h)",
			flavourTRT10.file, flavourTRT11.file, SearchedDirs(dirs), whereBackendsLive)
	}
	return "", fmt.Errorf("no compiled tensorrt backend can use the TensorRT library:\n%s", strings.Join(problems, "\n"))
}

func probe(soPath, libPath string) (backendInfo, error) {
	var info backendInfo
	raw, err := probeBackend(soPath, libPath)
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
const backendABI = 1

// CompiledBackend describes one backend flavour for `trt-action version`.
type CompiledBackend struct {
	Name            string // backend name in a build matrix
	File            string // shared object file name
	Path            string // where it was found; "" when not built
	For             string // e.g. "TensorRT 10.x"
	CompiledAgainst string // header version, e.g. "10.16.0.72"
	Library         string // version of the library it loads; "" when it cannot
	LibraryPath     string
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
	return fmt.Sprintf("%s; library %s (%s)", head, b.Library, b.LibraryPath)
}

// CompiledBackends describes every backend flavour: found or not, and
// whether it can load its TensorRT library (at libPath when given).
func CompiledBackends(libPath string) []CompiledBackend {
	dirs := BackendDirs()
	var out []CompiledBackend
	for _, f := range []flavour{flavourRTX, flavourTRT10, flavourTRT11} {
		b := CompiledBackend{Name: f.backend, File: f.file, For: f.major, Path: findFlavour(f, dirs)}
		if b.Path == "" {
			b.Problem = f.hint
			out = append(out, b)
			continue
		}
		info, err := probe(b.Path, libPath)
		switch {
		case errors.Is(err, errNoCgo):
			b.Problem = "this binary was built without cgo"
		case err != nil:
			b.Problem = err.Error()
		default:
			b.CompiledAgainst, b.Library, b.LibraryPath, b.Problem = info.CompiledAgainst, info.Library, info.LibraryPath, info.Error
		}
		out = append(out, b)
	}
	return out
}
