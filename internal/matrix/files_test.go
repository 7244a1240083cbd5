package matrix

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
	for _, s := range settingSpecs {
		if IsFileSetting(s.key) && fileSettingNouns[s.key] == "" {
			t.Errorf("file setting %s has no noun in fileSettingNouns", s.key)
		}
	}
}
