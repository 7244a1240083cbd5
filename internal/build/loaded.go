package build

import (
	"fmt"
	"slices"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/native"
)

// LoadedFiles is every file a run of builds loads to build, as inputs for
// runfiles.Check: the executable the workers run (exe; "" when unknown),
// and for each backend the builds use its shared objects (native.BackendFiles)
// and the TensorRT library and ONNX parser it loads from trtLib (--trt-lib),
// else where backend.LocateLibrary looks next (cache.LibraryFiles, as the
// engine cache names them). None is loaded here. A library that
// cannot be found is left to the build, which says where it looked.
func LoadedFiles(builds []matrix.Build, trtLib, exe string) []runfiles.File {
	var files []runfiles.File
	if exe != "" {
		files = append(files, runfiles.File{Path: exe, Role: runfiles.Input, Noun: "the trt-action executable, which the workers run"})
	}
	// A script build's program loads its own TensorRT, which trt-action
	// does not know (and looking it up costs an ldconfig run): only its
	// backend's shared objects, which the hook's native route may load.
	var backends []string
	loadsLibrary := map[string]bool{}
	for _, b := range builds {
		if !slices.Contains(backends, b.Backend) {
			backends = append(backends, b.Backend)
		}
		loadsLibrary[b.Backend] = loadsLibrary[b.Backend] || b.Script == nil
	}
	for _, backend := range backends {
		for _, p := range native.BackendFiles(backend) {
			files = append(files, runfiles.File{Path: p, Role: runfiles.Input, Noun: fmt.Sprintf("a shared object of the %s backend", backend)})
		}
		if !loadsLibrary[backend] {
			continue
		}
		libs, _ := cache.LibraryFiles(backend, trtLib)
		for _, p := range libs {
			files = append(files, runfiles.File{Path: p, Role: runfiles.Input, Noun: fmt.Sprintf("a library the %s backend loads", backend)})
		}
	}
	return files
}
