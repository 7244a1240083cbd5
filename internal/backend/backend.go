// Package backend is the one registry of the builders trt-action drives:
// datacenter TensorRT, TensorRT-RTX and the simulator. Everything that
// differs between them is a field here: the name a matrix file writes,
// what messages call it, its trtexec-equivalent tool, the shim flavours
// compiled for it (native/backends/shim.cc) and the library each loads,
// what an engine is built for, and what names it in an engine cache key.
// A new backend is a new entry in registry; every other package asks this
// one. It imports only internal/install (which imports nothing of
// trt-action's), so every layer may use it.
package backend

import (
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/install"
)

// The backends' names, as a matrix file writes them (backend: ...).
const (
	TensorRT    = "tensorrt"
	TensorRTRTX = "tensorrt-rtx"
	Sim         = "sim"
)

// Backend is one builder.
type Backend struct {
	Name    string // the matrix file's backend: value
	Product string // what messages call it: "TensorRT", "TensorRT-RTX"
	// Tool is its trtexec-equivalent command, whose build flags a build's
	// trtexec: line may hold and plan --trtexec writes; "" when it has none.
	Tool string
	// Flavours are the compilations of native/backends/shim.cc that build
	// for it, oldest major first: which one runs is decided by the major
	// version of the library that loads, the newest tried first
	// (native/backend_select.go).
	Flavours []Flavour
	// Library is how its builder library is found; zero for a backend
	// that has none (the simulator is built in).
	Library Library
	// Target is what its engines are built for.
	Target Target
	// Simulated: it needs no model, builds no engine a GPU could run,
	// accepts every builder setting and only reports it.
	Simulated bool
}

// Flavour is one compilation of the shim, against one major version's
// headers, loading that major's library.
type Flavour struct {
	ID      string // names the flavour in the settings table: trt10, trt11, rtx
	Product string // what messages call it: "TensorRT 10.x"
	Major   int    // the library major version it loads
	File    string // the shared object: libtam_trt10.so
	// Define is the preprocessor macro its compilation defines
	// (native/backends/backends.mk), HeadersVar the make variable naming
	// the headers it is compiled against.
	Define, HeadersVar string
	// InferSoname and ParserSoname are the library files it loads: a
	// folder named by --trt-lib or Library.Variable holds them.
	InferSoname, ParserSoname string
	// Setup says how a source checkout gets its headers when they are
	// not the make variable's alone; "" = "make HeadersVar=<folder
	// holding NvInfer.h>".
	Setup string
	// Arches are the GOARCH values its library is published for; none =
	// every one. Why says why the others have none.
	Arches []string
	Why    string
}

// Library is how a backend's builder library is found: --trt-lib, else
// Variable, else WheelFolder in trt-action's Python environment, else the
// dynamic loader's search path (LocateLibrary decides; the shim's
// load_library loads what it is told, internal/cache names the same files
// without loading them).
type Library struct {
	Variable string // the environment variable naming its folder or file
	// WheelFolder is the package folder of the PyPI wheel that publishes
	// the library, where pip puts it in a Python environment; "" when it
	// has none that trt-action looks for.
	WheelFolder string
	// Wheel is the PyPI project whose wheels hold WheelFolder, Extra the
	// extra of trt-action's wheel that installs it beside trt-action
	// (internal/wheel writes both into the wheel's metadata).
	Wheel, Extra string
	// SourceSetup is what, in a source checkout, installs the library
	// and names it in Variable.
	SourceSetup string
	// Install is how to get it wherever trt-action came from, for a
	// library that cannot be loaded; InstallHint adds what fits how this
	// trt-action was installed.
	Install string
}

// Target says what a backend's engine is built for, which decides what
// beyond the settings an engine cache key needs.
type Target int

const (
	// TargetNone: the simulator builds nothing a GPU runs.
	TargetNone Target = iota
	// TargetBuildGPU: the engine fits the GPU it was built on, so that
	// GPU's name and compute capability are part of its cache key.
	TargetBuildGPU
	// TargetSettings: built ahead of time for the compute capabilities its
	// targets setting names (or the library's default list), with no GPU;
	// the settings already say it.
	TargetSettings
)

// Flavour IDs, as the settings table names them.
const (
	FlavourTRT10 = "trt10"
	FlavourTRT11 = "trt11"
	FlavourRTX   = "rtx"
)

var registry = []Backend{
	{
		Name: TensorRT, Product: "TensorRT", Tool: "trtexec",
		Flavours: []Flavour{
			{ID: FlavourTRT10, Product: "TensorRT 10.x", Major: 10, File: "libtam_trt10.so",
				Define: "TAM_FLAVOR_TRT10", HeadersVar: "TRT10_INCLUDE",
				InferSoname: "libnvinfer.so.10", ParserSoname: "libnvonnxparser.so.10"},
			{ID: FlavourTRT11, Product: "TensorRT 11.x", Major: 11, File: "libtam_trt11.so",
				Define: "TAM_FLAVOR_TRT11", HeadersVar: "TRT11_INCLUDE",
				InferSoname: "libnvinfer.so.11", ParserSoname: "libnvonnxparser.so.11"},
		},
		Library: Library{Variable: "TRT_ACTION_TRT_LIB",
			Install: "set TRT_ACTION_TRT_LIB (or --trt-lib) to the folder holding libnvinfer; run inside NVIDIA's TensorRT " +
				"container (nvcr.io/nvidia/tensorrt), where it is on the library path, or install TensorRT from NVIDIA"},
		Target: TargetBuildGPU,
	},
	{
		Name: TensorRTRTX, Product: "TensorRT-RTX", Tool: "tensorrt_rtx",
		Flavours: []Flavour{
			{ID: FlavourRTX, Product: "TensorRT-RTX 1.x", Major: 1, File: "libtam_rtx.so",
				Define: "TAM_FLAVOR_RTX", HeadersVar: "TRT_RTX_INCLUDE",
				InferSoname: "libtensorrt_rtx.so.1", ParserSoname: "libtensorrt_onnxparser_rtx.so.1",
				Setup: "`make` after `eval \"$(scripts/setup-tensorrt-rtx)\"`",
				// NVIDIA publishes the library (PyPI tensorrt-rtx-cu12-libs) for x86_64 only.
				Arches: []string{"amd64"}, Why: "TensorRT-RTX is published for x86_64 only"},
		},
		// The wheel tensorrt-rtx-cu12-libs puts the library in its package
		// folder tensorrt_rtx_libs (the files of its wheels on
		// https://pypi.org/project/tensorrt-rtx-cu12-libs/).
		Library: Library{Variable: "TRT_ACTION_RTX_LIB", WheelFolder: "tensorrt_rtx_libs",
			Wheel: "tensorrt-rtx-cu12-libs", Extra: "rtx", SourceSetup: "eval \"$(scripts/setup-tensorrt-rtx)\"",
			Install: "set TRT_ACTION_RTX_LIB (or --trt-lib) to the folder holding libtensorrt_rtx.so.1"},
		Target: TargetSettings,
	},
	{Name: Sim, Product: "the simulator", Target: TargetNone, Simulated: true},
}

// All is every backend, in the order messages list them.
func All() []Backend { return slices.Clone(registry) }

// Names lists the backends' names, in the order messages list them.
func Names() []string {
	out := make([]string, len(registry))
	for i, b := range registry {
		out[i] = b.Name
	}
	return out
}

// Lookup returns the backend named name.
func Lookup(name string) (Backend, bool) {
	i := slices.IndexFunc(registry, func(b Backend) bool { return b.Name == name })
	if i < 0 {
		return Backend{}, false
	}
	return registry[i], true
}

// Of returns the backend named name, or a zero Backend whose Name is name:
// for code that runs after the matrix was validated, where every name is
// known.
func Of(name string) Backend {
	if b, ok := Lookup(name); ok {
		return b
	}
	return Backend{Name: name, Product: name}
}

// OfLibrary returns the backend a TensorRT library belongs to, from its
// name as trt-action writes it (a report's library, the hook's): its
// product, a space, its version ("TensorRT-RTX 1.7.1.116" is
// tensorrt-rtx's). Only backends that load a library have one; false for
// a name no backend's product starts.
func OfLibrary(library string) (Backend, bool) {
	for _, b := range registry {
		if len(b.Flavours) > 0 && strings.HasPrefix(library, b.Product+" ") {
			return b, true
		}
	}
	return Backend{}, false
}

// Flavours lists every flavour of every backend, in registry order.
func Flavours() []Flavour {
	var out []Flavour
	for _, b := range registry {
		out = append(out, b.Flavours...)
	}
	return out
}

// FlavourByID returns the flavour with that ID and its backend.
func FlavourByID(id string) (Flavour, Backend, bool) {
	for _, b := range registry {
		for _, f := range b.Flavours {
			if f.ID == id {
				return f, b, true
			}
		}
	}
	return Flavour{}, Backend{}, false
}

// HasFlavour reports whether one of b's flavours is among ids.
func (b Backend) HasFlavour(ids []string) bool {
	return slices.ContainsFunc(b.Flavours, func(f Flavour) bool { return slices.Contains(ids, f.ID) })
}

// Unpublished says why f has no shared object for arch (its library is
// not published for it); "" when it may have one.
func (f Flavour) Unpublished(backendName, arch string) string {
	if len(f.Arches) > 0 && !slices.Contains(f.Arches, arch) {
		return f.Why + ", so there is no " + backendName + " backend for " + arch
	}
	return ""
}

// BuildHint says how a source checkout builds f's shared object.
func (f Flavour) BuildHint() string {
	if f.Setup != "" {
		return "build it with " + f.Setup
	}
	return "build it with `make " + f.HeadersVar + "=<folder holding NvInfer.h>`"
}

// MissingHint says what to do about f's shared object, which was not
// found on arch, for the installation in: why there is none for arch, or
// in a source checkout how to build it, else where the installation
// keeps its backends (install.Installation.MissingBackends). dirVar is the
// variable that names a folder of backends.
func (f Flavour) MissingHint(backendName, arch, dirVar string, in install.Installation) string {
	if why := f.Unpublished(backendName, arch); why != "" {
		return why
	}
	if in.Kind == install.Source {
		return f.BuildHint() + "; or set " + dirVar + " to a folder holding it"
	}
	return in.MissingBackends(dirVar)
}

// InstallHint says how to get b's library, for the installation in:
// Library.Install, and for a library published as a wheel, the way to
// that wheel that fits how trt-action was installed (pip's extra beside a
// pip-installed trt-action, the checkout's set-up script in a source
// checkout, else the library's wheel and the variable).
func (b Backend) InstallHint(in install.Installation) string {
	lib := b.Library
	if lib.Wheel == "" {
		return lib.Install
	}
	machines := b.machines()
	switch {
	case in.Pip():
		pip := "pip install"
		if in.Kind == install.WheelTarget {
			pip += " --target " + in.Root
		}
		return lib.Install + "; or `" + pip + " \"trt-action[" + lib.Extra + "]\"`" + machines +
			" into the Python environment trt-action is installed in (" + in.Root + "), which puts it in " +
			lib.WheelFolder + ", where trt-action finds it with no variable to set"
	case in.Kind == install.Source && lib.SourceSetup != "":
		return lib.Install + "; or `" + lib.SourceSetup + "`, which installs the PyPI wheel " + lib.Wheel +
			" and exports " + lib.Variable
	}
	return lib.Install + "; the PyPI wheel " + lib.Wheel + machines + " holds it: `pip install " + lib.Wheel +
		"`, then set " + lib.Variable + " to its " + lib.WheelFolder + " folder"
}

// machines is " (x86_64 only)" for a backend whose library is published
// for some machines only, as pip and uname name them; "" for every one.
func (b Backend) machines() string {
	var names []string
	for _, f := range b.Flavours {
		for _, a := range f.Arches {
			name := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[a]
			if name == "" {
				name = a
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + " only)"
}

// BuiltIn reports whether b loads no library: its cache key names no
// library file, only the backend.
func (b Backend) BuiltIn() bool { return b.Library.Variable == "" }
