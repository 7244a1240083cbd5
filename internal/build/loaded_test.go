package build

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// The files a run loads are inputs: the executable the workers run, each
// backend's shared object where the backend search finds it, and the
// library and parser --trt-lib names; a backend that builds in the
// supervisor's own binary (the simulator) adds none, and a library found
// nowhere is left to the build.
func TestLoadedFilesAreTheRunsInputs(t *testing.T) {
	shims, libs := t.TempDir(), t.TempDir()
	rtx, _ := backend.Lookup("tensorrt-rtx")
	flavour := rtx.Flavours[0]
	touch := func(path string) string {
		t.Helper()
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	shim := touch(filepath.Join(shims, flavour.File))
	infer, parser := touch(filepath.Join(libs, flavour.InferSoname)), touch(filepath.Join(libs, flavour.ParserSoname))
	t.Setenv("TRT_ACTION_BACKEND_DIR", shims)
	builds := []matrix.Build{{Name: "a", Backend: "tensorrt-rtx"}, {Name: "b", Backend: "tensorrt-rtx"}, {Name: "s", Backend: "sim"}}

	var inputs []string
	for _, f := range LoadedFiles(builds, libs, "/opt/trt-action/bin/trt-action") {
		if f.Role != runfiles.Input {
			t.Errorf("%s: role %d, want an input", f.Path, f.Role)
		}
		inputs = append(inputs, f.Path)
	}
	if want := []string{"/opt/trt-action/bin/trt-action", shim, infer, parser}; !slices.Equal(inputs, want) {
		t.Errorf("loaded files %q, want %q (each once)", inputs, want)
	}
	if got := LoadedFiles(builds[2:], "", ""); len(got) != 0 {
		t.Errorf("the simulator alone, executable unknown: %+v, want nothing", got)
	}
	// A script build's program loads a TensorRT of its own choosing: only
	// the backend's shared object is trt-action's to name.
	script := matrix.Build{Name: "c", Backend: "tensorrt-rtx", Script: &matrix.Script{Argv: []string{"python"}}}
	if got := LoadedFiles([]matrix.Build{script}, libs, ""); len(got) != 1 || got[0].Path != shim {
		t.Errorf("a script build alone: %+v, want only the shared object", got)
	}
	missing := LoadedFiles(builds[:1], filepath.Join(libs, "absent"), "")
	if len(missing) != 1 || missing[0].Path != shim {
		t.Errorf("a library found nowhere: %+v, want only the shared object", missing)
	}
}
