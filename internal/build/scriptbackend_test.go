package build

import (
	"slices"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/matrix"
)

// A program that loads another backend's library than the build
// declares keeps the declared backend in its report and is warned of
// once, however many TensorRT builds it runs; one that loads its own
// backend's is not.
func TestALibraryOfAnotherBackendIsWarnedOfOnce(t *testing.T) {
	rtx := "FAKE_LIBRARY=" + backend.Of(backend.TensorRTRTX).Product + " 1.7.1.116"
	declared := func(name string) func(*matrix.Build) {
		return func(b *matrix.Build) {
			b.Backend = name
			b.Script.Env = append(b.Script.Env, rtx)
		}
	}
	got, _ := runScripts(t, scriptOptions(t),
		scriptBuild(t, "labelled", "two", declared(backend.TensorRT)),
		scriptBuild(t, "right", "two", declared(backend.TensorRTRTX)))
	b := got["labelled"]
	about := func(w string) bool { return strings.Contains(w, "a "+backend.TensorRTRTX+" library") }
	warned := slices.DeleteFunc(slices.Clone(b.Warnings), func(w string) bool { return !about(w) })
	want := "TensorRT build 1 loaded TensorRT-RTX 1.7.1.116, a tensorrt-rtx library, but this build is declared tensorrt, " +
		"which its report keeps: declare tensorrt-rtx (backend: in a matrix file, --backend for trt-action run)"
	if b.Backend != backend.TensorRT || !slices.Equal(warned, []string{want}) {
		t.Errorf("labelled: backend %s, warnings %q; want %s kept and once %q", b.Backend, b.Warnings, backend.TensorRT, want)
	}
	if len(b.TensorRTBuilds) != 2 {
		t.Errorf("labelled: %d TensorRT builds, want 2", len(b.TensorRTBuilds))
	}
	if w := got["right"].Warnings; slices.ContainsFunc(w, about) {
		t.Errorf("right: warned of its own backend's library: %q", w)
	}
}
