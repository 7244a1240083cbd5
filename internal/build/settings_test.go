package build

import (
	"reflect"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/matrix"
)

// TestReportShowsSettingsAndLibrary checks a build's report says how it was
// built: its settings under the matrix's key names, and the library.
func TestReportShowsSettingsAndLibrary(t *testing.T) {
	dir := t.TempDir()
	level := 2
	with := simBuild(dir, "with", func(b *matrix.Build) {
		b.OptLevel = &level
		b.Settings = matrix.Settings{{Key: "profiling-verbosity", Value: "detailed"}, {Key: "tf32", Value: false}}
		b.TrtexecIgnored = []string{"--iterations", "--useCudaGraph"}
	})
	without := simBuild(dir, "without", nil)
	rep := runReport([]matrix.Build{with, without}, testOptions(t), nil)
	got := byName(rep)
	s := got["with"].Settings
	if s == nil {
		t.Fatal("no settings in the report")
	}
	want := map[string]any{"opt-level": 2, "profiling-verbosity": "detailed", "tf32": false}
	if !reflect.DeepEqual(s.Applied, want) {
		t.Errorf("applied = %v, want %v", s.Applied, want)
	}
	// The simulator names no library; test/realbuild checks TensorRT-RTX's.
	if s.Library != got["with"].Library {
		t.Errorf("settings library %q, build library %q: want the loaded library in both", s.Library, got["with"].Library)
	}
	if w := got["with"].Warnings; len(w) != 1 || !strings.Contains(w[0], "trtexec flags ignored") || !strings.Contains(w[0], "--iterations --useCudaGraph") {
		t.Errorf("warnings %q, want the ignored trtexec flags", w)
	}
	if got["without"].Settings != nil {
		t.Errorf("a build without settings reports %+v", got["without"].Settings)
	}
}
