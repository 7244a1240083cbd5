package backend

import (
	"os"
	"path/filepath"

	"github.com/trt-action/trt-action/internal/install"
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
	// Fix says how to get the library when it cannot be loaded from
	// here, for this installation (Backend.InstallHint): the backend's
	// message ends with it.
	Fix string
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
// it turns out not to hold the library: nothing silently replaces it. Its
// Fix is how to get the library, for this installation (InstallHint).
func LocateLibrary(b Backend, trtLib string) LibraryLocation {
	return locate(b, trtLib, install.Current())
}

// LocateLibraryFor is LocateLibrary for a trt-action whose executable is
// exe (tests stand in a made-up installation).
func LocateLibraryFor(b Backend, trtLib, exe string) LibraryLocation {
	return locate(b, trtLib, install.Of(exe))
}

// locate is LocateLibrary for the installation in.
func locate(b Backend, trtLib string, in install.Installation) LibraryLocation {
	loc := LibraryLocation{}
	switch {
	case trtLib != "":
		loc = LibraryLocation{Path: trtLib, Source: FromFlag, Name: "--trt-lib"}
	case b.Library.Variable != "" && os.Getenv(b.Library.Variable) != "":
		loc = LibraryLocation{Path: os.Getenv(b.Library.Variable), Source: FromVariable, Name: b.Library.Variable}
	case b.Library.WheelFolder != "":
		if dir := b.wheelFolder(in.Sites); dir != "" {
			loc = LibraryLocation{Path: dir, Source: FromEnvironment, Name: b.Library.WheelFolder}
		}
	}
	loc.Fix = b.InstallHint(in)
	return loc
}

// LocateLibraryIn is where a Python program whose environment has the
// package folders sites loads b's library from, when its environment
// holds b's wheel folder (Library.WheelFolder) with the library: the
// folder its bindings load (a builder script's, internal/pyenv). ok is
// false otherwise, and the caller locates it as for any build
// (LocateLibrary).
func LocateLibraryIn(b Backend, sites []string) (loc LibraryLocation, ok bool) {
	if b.Library.WheelFolder == "" {
		return LibraryLocation{}, false
	}
	dir := b.wheelFolder(sites)
	return LibraryLocation{Path: dir, Source: FromEnvironment, Name: b.Library.WheelFolder}, dir != ""
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

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
