package build

import (
	"maps"
	"reflect"
	"slices"
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

// The worker is told every builder setting's key, the fixed ones
// (precision, shapes, targets, the timing cache) as well as the others, from the one
// list the report shows as applied: a build TensorRT fails names them all.
func TestTheWorkerIsToldEveryBuilderSettingsKey(t *testing.T) {
	b := simBuild(t.TempDir(), "all", func(b *matrix.Build) {
		b.Precision, b.Targets, b.TimingCache = []string{"fp16"}, []string{"sm86"}, "t.cache"
		b.Profiles = []map[string]matrix.Shape{{"input": {Min: []int64{1}, Opt: []int64{4}, Max: []int64{8}}}}
		b.Settings = matrix.Settings{{Key: "opt-level", Value: 1}, {Key: "refit", Value: "identical"}}
	})
	r := &runner{opts: Options{}}
	spec, err := (&watch{r: r, spec: b}).workerSpec()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"opt-level", "precision", "refit", "shapes", "targets", "timing-cache"}
	if got := spec.Request.SettingKeys; !slices.Equal(got, want) {
		t.Errorf("setting keys %q, want %q", got, want)
	}
	if !slices.Equal(want, slices.Sorted(maps.Keys(b.BuilderSettings()))) {
		t.Errorf("the test's list is not BuilderSettings' any more: %v", slices.Sorted(maps.Keys(b.BuilderSettings())))
	}
}

// A simulated build records its optimization profiles as a real one
// does: each in the report's settings.applied, in order, and in the
// request the worker gets.
func TestProfilesReachTheReportAndTheWorker(t *testing.T) {
	shape := func(min, opt, max int64) matrix.Shape {
		return matrix.Shape{Min: []int64{min, 3}, Opt: []int64{opt, 3}, Max: []int64{max, 3}}
	}
	profiles := []map[string]matrix.Shape{{"x": shape(1, 2, 4)}, {"x": shape(4, 8, 16)}, {"x": shape(16, 16, 32)}}
	b := simBuild(t.TempDir(), "three", func(b *matrix.Build) { b.Profiles = profiles })
	rep := runReport([]matrix.Build{b}, testOptions(t), nil)
	s := byName(rep)["three"].Settings
	if s == nil || !reflect.DeepEqual(s.Applied, map[string]any{"profiles": profiles}) {
		t.Errorf("applied = %+v, want the three profiles in order", s)
	}
	spec, err := (&watch{r: &runner{opts: Options{}}, spec: b}).workerSpec()
	if err != nil {
		t.Fatal(err)
	}
	got := spec.Request.Profiles
	if len(got) != 3 || got[0]["x"].Max[0] != 4 || got[1]["x"].Opt[0] != 8 || got[2]["x"].Max[0] != 32 {
		t.Errorf("the request's profiles %+v, want the three in order", got)
	}
	if !slices.Equal(spec.Request.SettingKeys, []string{"profiles"}) {
		t.Errorf("setting keys %q, want profiles", spec.Request.SettingKeys)
	}
}
