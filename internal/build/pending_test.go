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
	with := simBuild(dir, "with", func(b *matrix.Build) {
		b.Settings = matrix.Settings{{Key: "opt-level", Value: 2}, {Key: "profiling-verbosity", Value: "detailed"}, {Key: "tf32", Value: false}}
		b.TrtexecIgnored = []string{"--iterations", "--useCudaGraph"}
		b.TrtexecWarnings = []string{"--explicitBatch: removed in TensorRT 10, where explicit batch is always on; ignored"}
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
	if w := got["with"].Warnings; len(w) != 2 || !strings.Contains(w[0], "trtexec flags ignored") || !strings.Contains(w[0], "--iterations --useCudaGraph") ||
		w[1] != "trtexec --explicitBatch: removed in TensorRT 10, where explicit batch is always on; ignored" {
		t.Errorf("warnings %q, want the ignored trtexec flags, then the removed one", w)
	}
	if got["without"].Settings != nil {
		t.Errorf("a build without settings reports %+v", got["without"].Settings)
	}
}
