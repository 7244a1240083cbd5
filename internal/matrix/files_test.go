package matrix

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/settings"
)

// Issue 17 item 2, review point 8: each input is named as what it is (a
// plugin, the model, an external-data file of the model) at the key that
// names it, in the build, in defaults or on a trtexec line; the engine at
// engine:, or at name: when its path is the name's.
func TestRunFilesNamesEachFileAtItsKey(t *testing.T) {
	dir := realDir(t, t.TempDir())
	for _, name := range []string{"model.onnx", "weights.bin"} {
		data, err := os.ReadFile(filepath.Join("..", "onnx", "testdata", "external", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"p.so", "calib.cache", "t.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := filepath.Join(dir, "m.yml")
	body := `version: 1
defaults:
  plugins: [p.so]
builds:
  - name: a
    backend: tensorrt
    onnx: model.onnx
    int8-calibration-cache: calib.cache
    precision: [int8]
    engine: a.engine
  - name: b
    backend: tensorrt
    trtexec: --onnx=model.onnx --saveEngine=b.engine --timingCacheFile=tc.cache
  - name: c
    backend: sim
    sim: {trace: t.jsonl}
`
	if err := os.WriteFile(m, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(m)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rf := range f.RunFiles(f.Builds) {
		rel, _ := filepath.Rel(dir, rf.Path)
		if rf.Path == m || strings.HasSuffix(rf.Path, ".bin") && rel != "weights.bin" {
			continue // the matrix file; the model's other external data
		}
		at := strings.TrimPrefix(rf.Pos, m)
		got = append(got, fmt.Sprintf("%s %s: %s (%s%s)", rf.Build, rel, rf.Noun, rf.What, at))
	}
	want := []string{
		"a model.onnx: the model (:7:5)",
		"a weights.bin: an external-data file of the model (:7:5)",
		"a p.so: a plugin (:3:3)",
		"a calib.cache: the INT8 calibration cache (:8:5)",
		"b model.onnx: the model (:13:14)",
		"b weights.bin: an external-data file of the model (:13:14)",
		"b p.so: a plugin (:3:3)",
		"c p.so: a plugin (:3:3)",
		"c t.jsonl: the simulator trace (:16:11)",
		"a a.engine: the engine (engine:10:5)",
		"b b.engine: the engine (engine:13:14)",
		"b tc.cache: the timing cache (timing-cache:13:14)",
		"c c.engine: the engine (engine:14:5)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A key added to the settings that name files gets a noun of its own.
func TestEveryFileSettingHasANoun(t *testing.T) {
	for _, s := range settings.All() {
		if settings.IsFile(s.Key) && fileSettingNouns[s.Key] == "" {
			t.Errorf("file setting %s has no noun in fileSettingNouns", s.Key)
		}
	}
}

// Issue 17 item 2, review point 8: a matrix with errors comes back as far
// as it is valid, for the check of the files it names: a build with a
// valid name keeps its paths; one without a valid name is left out, as a
// message could not name it.
func TestLoadPartialKeepsWhatIsValid(t *testing.T) {
	dir := realDir(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, "m.onnx"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.yml")
	body := `version: 1
cache: {dir: .trt-cache, max-size: lots}
builds:
  - {name: a, backend: sim, onnx: m.onnx, engine: m.onnx, opt-level: 9}
  - {name: "b/c", backend: sim, engine: m.onnx}
`
	if err := os.WriteFile(m, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := LoadPartial(m)
	if err == nil || f == nil {
		t.Fatalf("LoadPartial = %v, %v; want the file and its errors", f, err)
	}
	if _, err := Load(m); err == nil {
		t.Error("Load took a file with errors")
	}
	if f.Cache == nil || f.Cache.Dir != filepath.Join(dir, ".trt-cache") || f.Cache.DirPos.String() != m+":2:9" {
		t.Errorf("cache = %+v, want its folder at dir (%s:2:9)", f.Cache, m)
	}
	err = runfiles.Check(f.RunFiles(f.Builds))
	want := m + `:4:43: engine "` + filepath.Join(dir, "m.onnx") + `" of build "a" is the model of build "a" (at ` + m + `:4:29): the run would write over it; give the output a path of its own`
	if err == nil || err.Error() != want {
		t.Errorf("collisions:\n%v\nwant\n%s", err, want)
	}
	if f, err := LoadPartial(filepath.Join(dir, "absent.yml")); f != nil || err == nil {
		t.Errorf("LoadPartial of no file = %v, %v; want only an error", f, err)
	}
}
