package backend

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Where a backend's builder library comes from is decided here and only
// here: the build (the worker's request to the shim), `trt-action version`
// and the engine cache's library identity all ask LocateLibrary, so the
// file a cache key names is the file a build loads. The shim
// (native/backends/shim.cc) is told the answer and its origin; it reads no
// variable of its own.

// LibrarySource is where a LibraryLocation came from.
type LibrarySource int

const (
	// FromSearchPath: nothing named the library; the shim dlopens the bare
	// soname and the dynamic loader picks the file.
	FromSearchPath LibrarySource = iota
	// FromFlag: --trt-lib.
	FromFlag
	// FromVariable: the backend's Library.Variable.
	FromVariable
	// FromEnvironment: the wheel package folder (Library.WheelFolder) in
	// the Python environment trt-action was pip-installed into.
	FromEnvironment
)

// LibraryLocation is where a backend's builder library is loaded from.
type LibraryLocation struct {
	// Path is a file or a folder holding the flavour's InferSoname; ""
	// with FromSearchPath.
	Path   string
	Source LibrarySource
	// Name names the source: "--trt-lib", the variable, or the wheel
	// folder; "" with FromSearchPath.
	Name string
}

// Origin is the location's source in the words the shim's messages use
// after a file it tried: "from --trt-lib", "from TRT_ACTION_RTX_LIB",
// "from the Python environment's tensorrt_rtx_libs (PATH)", "on the
// library search path".
func (l LibraryLocation) Origin() string {
	switch l.Source {
	case FromFlag, FromVariable:
		return "from " + l.Name
	case FromEnvironment:
		return "from the Python environment's " + l.Name + " (" + l.Path + ")"
	}
	return "on the library search path"
}

// Setting is the location as a user would write it, for messages about
// its content: "--trt-lib=PATH", "TRT_ACTION_RTX_LIB=PATH", or the
// environment's folder with its name; "" with FromSearchPath.
func (l LibraryLocation) Setting() string {
	switch l.Source {
	case FromFlag, FromVariable:
		return l.Name + "=" + l.Path
	case FromEnvironment:
		return "the Python environment's " + l.Name + " (" + l.Path + ")"
	}
	return ""
}

// LocateLibrary decides where b's builder library is loaded from: trtLib
// (--trt-lib) when given, else b's variable when set, else, for a backend
// whose library is published as a wheel (Library.WheelFolder), that
// wheel's folder in the Python environment the running executable was
// pip-installed into, when it holds the library, else the dynamic
// loader's search path. A location the user named always wins, also when
// it turns out not to hold the library: nothing silently replaces it.
func LocateLibrary(b Backend, trtLib string) LibraryLocation {
	return locate(b, trtLib, runningEnvironment)
}

// LocateLibraryFor is LocateLibrary for a trt-action whose executable is
// exe (tests stand in a made-up installation).
func LocateLibraryFor(b Backend, trtLib, exe string) LibraryLocation {
	return locate(b, trtLib, func() []string { return environmentOf(exe) })
}

// runningEnvironment is environmentOf the running executable, looked up
// once per process: the engine cache asks LocateLibrary for every build of
// a matrix, and the folders (globs of python3.*, a dist-info) do not change
// while trt-action runs.
var runningEnvironment = sync.OnceValue(func() []string {
	exe, _ := os.Executable() // "" when it cannot be told: no environment is searched
	return environmentOf(exe)
})

// locate is LocateLibrary with the package folders of trt-action's Python
// environment from env, asked only when nothing named the library.
func locate(b Backend, trtLib string, env func() []string) LibraryLocation {
	if trtLib != "" {
		return LibraryLocation{Path: trtLib, Source: FromFlag, Name: "--trt-lib"}
	}
	if v := b.Library.Variable; v != "" && os.Getenv(v) != "" {
		return LibraryLocation{Path: os.Getenv(v), Source: FromVariable, Name: v}
	}
	if b.Library.WheelFolder == "" {
		return LibraryLocation{}
	}
	if dir := b.wheelFolder(env()); dir != "" {
		return LibraryLocation{Path: dir, Source: FromEnvironment, Name: b.Library.WheelFolder}
	}
	return LibraryLocation{}
}

// environmentOf lists the package folders of the Python environment that
// exe was pip-installed into (pythonEnvironment); none when exe is "".
func environmentOf(exe string) []string {
	if exe == "" {
		return nil
	}
	// Links resolved: pip puts the binary in PREFIX/bin, and a link to it
	// elsewhere (~/bin/trt-action) still belongs to that environment.
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return pythonEnvironment(filepath.Dir(filepath.Dir(exe)))
}

// wheelFolder is b's Library.WheelFolder in the first of the environment's
// package folders sites where it holds one of b's flavours' libraries;
// else "". That is the folder the environment's own Python bindings load
// (tensorrt-rtx-cu12-bindings imports tensorrt_rtx_libs), so a build
// through trt-action and a script's build use the same library.
func (b Backend) wheelFolder(sites []string) string {
	for _, site := range sites {
		dir := filepath.Join(site, b.Library.WheelFolder)
		for _, f := range b.Flavours {
			if isFile(filepath.Join(dir, f.InferSoname)) {
				return dir
			}
		}
	}
	return ""
}

// distInfo is the glob of trt-action's own installed-distribution folder
// (the wheel's trt_action-VERSION.dist-info).
const distInfo = "trt_action-*.dist-info"

// pythonEnvironment lists the package folders of the Python environment
// that trt-action was pip-installed into under prefix (the parent of the
// binary's folder): of prefix/lib{,64}/python3.*/{site,dist}-packages and
// prefix itself (pip install --target puts packages there and the binary
// in prefix/bin), those holding trt-action's dist-info folder, each once
// (a venv's lib64 is a link to lib), newest Python first. A trt-action
// unpacked from a tarball next to some unrelated Python has none: that
// Python's packages are not trt-action's environment.
func pythonEnvironment(prefix string) []string {
	var out, seen []string
	for _, dir := range sitePackages(prefix) {
		if matches, _ := filepath.Glob(filepath.Join(dir, distInfo)); len(matches) == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || slices.Contains(seen, real) {
			continue
		}
		seen = append(seen, real)
		out = append(out, dir)
	}
	return out
}

// sitePackages lists the folders under prefix where pip may have put
// packages: the install schemes' purelib and platlib (lib and lib64;
// site-packages, and dist-packages on Debian's Python), then prefix itself.
func sitePackages(prefix string) []string {
	var out []string
	for _, lib := range []string{"lib", "lib64"} {
		pythons, _ := filepath.Glob(filepath.Join(prefix, lib, "python3.*"))
		slices.SortStableFunc(pythons, newerPythonFirst)
		for _, py := range pythons {
			for _, kind := range []string{"site-packages", "dist-packages"} {
				if dir := filepath.Join(py, kind); isDir(dir) {
					out = append(out, dir)
				}
			}
		}
	}
	return append(out, prefix)
}

// newerPythonFirst orders python3.N folders by N, highest first (python3.9
// sorts after python3.12 as text); a name without a number goes last.
func newerPythonFirst(a, b string) int {
	minor := func(p string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "python3."))
		if err != nil {
			return -1
		}
		return n
	}
	return minor(b) - minor(a)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
