package main

// End-to-end tests of issue 17 item 2: no output of a run is written over
// an input of the run or over another output.

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overwriteMatrix builds one simulated engine from a model with external
// data (the walker's test model: models/mlp.onnx keeps tensors in
// models/weights.bin and others).
const overwriteMatrix = `version: 1
builds:
  - name: a
    backend: sim
    sim: {step: 0s}
    onnx: models/mlp.onnx
    engine: ENGINE
`

// overwriteProject writes the matrix as c.yml with engine path engine, the
// model and its external data, an engine and a report from an earlier run,
// and returns the folder and every file in it with its content.
func overwriteProject(t *testing.T, engine string) (string, map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.yml"), strings.Replace(overwriteMatrix, "ENGINE", engine, 1))
	src := filepath.Join("..", "..", "internal", "onnx", "testdata", "external")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "model.onnx" {
			rel = "mlp.onnx"
		}
		writeFile(t, filepath.Join(dir, "models", rel), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "out", "a.engine"), "an engine of an earlier run")
	writeFile(t, filepath.Join(dir, "trt-report.json"), `{"note": "the report of an earlier run"}`)
	writeFile(t, filepath.Join(dir, "prev.json"), `{"note": "a baseline"}`)
	return dir, snapshot(t, dir)
}

// head is the start of data, for a message.
func head(data []byte) []byte { return data[:min(len(data), 40)] }

// snapshot is every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Each case of the issue, and the external data and the baseline report:
// refused before any build with exit 2 and a message naming both files,
// every file left byte for byte as it was.
func TestNoOutputIsWrittenOverAnInputOrAnotherOutput(t *testing.T) {
	cases := []struct {
		name   string
		engine string
		args   []string
		want   string
	}{
		{"--report c.yml", "out/a.engine", []string{"--report", "c.yml"},
			`trt-action: --report "c.yml" is the matrix file: the run would write over it`},
		{"--junit models/mlp.onnx", "out/a.engine", []string{"--junit", "models/mlp.onnx"},
			`trt-action: --junit "models/mlp.onnx" is the model of build "a"`},
		{"--summary out/a.engine", "out/a.engine", []string{"--summary", "out/a.engine"},
			`trt-action: --summary "out/a.engine" is the engine of build "a" (at c.yml:7:5): two outputs would write one file`},
		{"--events models/weights.bin", "out/a.engine", []string{"--events", "models/weights.bin"},
			`trt-action: --events "models/weights.bin" is an external-data file of the model of build "a" (at c.yml:6:5)`},
		{"--report is --baseline", "out/a.engine", []string{"--baseline", "prev.json", "--report", "prev.json"},
			`trt-action: --report "prev.json" is the baseline report (--baseline): the run would write over it`},
		{"engine: models/mlp.onnx", "models/mlp.onnx", nil,
			`c.yml:7:5: engine "models/mlp.onnx" of build "a" is the model of build "a"`},
		{"engine: c.yml", "c.yml", nil,
			`c.yml:7:5: engine "c.yml" of build "a" is the matrix file`},
		{"engine: trt-report.json", "trt-report.json", nil,
			`trt-action: --report "trt-report.json" is the engine of build "a" (at c.yml:7:5): two outputs would write one file`},
		{"engine in the cache folder", "cache/a.engine", []string{"--cache", "cache"},
			`c.yml:7:5: engine "cache/a.engine" of build "a" lies inside "cache", the engine cache folder (--cache), which the run manages`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, before := overwriteProject(t, c.engine)
			out, err := command(dir, nil, append([]string{"build", "c.yml"}, c.args...)...).CombinedOutput()
			if code := exitCode(err); code != 2 {
				t.Errorf("exit %d, want 2 (refused before any build)\n%s", code, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Errorf("output lacks %q:\n%s", c.want, out)
			}
			after := snapshot(t, dir)
			for name, data := range before {
				if !bytes.Equal(after[name], data) {
					t.Errorf("%s changed: now %d bytes starting %q", name, len(after[name]), head(after[name]))
				}
			}
			for name := range after {
				if _, ok := before[name]; !ok {
					t.Errorf("%s was written", name)
				}
			}
		})
	}
}

// validate refuses what the matrix alone names: an engine over the matrix
// file or a model, at the engine key's position.
func TestValidateRefusesAnEngineOverAnInput(t *testing.T) {
	for engine, want := range map[string]string{
		"models/mlp.onnx":        `c.yml:7:5: engine "models/mlp.onnx" of build "a" is the model of build "a" (at c.yml:6:5): the run would write over it; give the output a path of its own`,
		"c.yml":                  `c.yml:7:5: engine "c.yml" of build "a" is the matrix file: the run would write over it; give the output a path of its own`,
		"models/const.bin":       `c.yml:7:5: engine "models/const.bin" of build "a" is an external-data file of the model of build "a" (at c.yml:6:5): the run would write over it; give the output a path of its own`,
		"models/../c.yml":        `c.yml:7:5: engine "c.yml" of build "a" is the matrix file`,
		"./models/mlp.onnx":      `c.yml:7:5: engine "models/mlp.onnx" of build "a" is the model of build "a"`,
		"models/sub/../../c.yml": `c.yml:7:5: engine "c.yml" of build "a" is the matrix file`,
	} {
		t.Run(engine, func(t *testing.T) {
			dir, before := overwriteProject(t, engine)
			out, err := command(dir, nil, "validate", "c.yml").CombinedOutput()
			if code := exitCode(err); code != 2 || !strings.HasPrefix(string(out), want) {
				t.Errorf("exit %d, output:\n%s\nwant exit 2 and:\n%s", code, out, want)
			}
			if after := snapshot(t, dir); len(after) != len(before) {
				t.Errorf("validate wrote files: %d before, %d after", len(before), len(after))
			}
		})
	}
}

// A timing cache shared by builds stays allowed; one that is another
// build's engine is refused at its key.
func TestATimingCacheMayBeSharedButBeNothingElse(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.yml"), `version: 1
defaults: {backend: sim, timing-cache: tc/shared.cache}
builds:
  - {name: a}
  - {name: b}
`)
	if out, err := command(dir, nil, "validate", "c.yml").CombinedOutput(); exitCode(err) != 0 {
		t.Errorf("a shared timing cache: exit %d\n%s", exitCode(err), out)
	}
	writeFile(t, filepath.Join(dir, "c.yml"), `version: 1
defaults: {backend: sim}
builds:
  - {name: a, engine: out/a.engine}
  - {name: b, timing-cache: out/a.engine}
`)
	out, err := command(dir, nil, "validate", "c.yml").CombinedOutput()
	want := `c.yml:5:15: timing-cache "out/a.engine" of build "b" is the engine of build "a" (at c.yml:4:15): builds may share a timing cache, but it may be nothing else; give each a path of its own`
	if exitCode(err) != 2 || strings.TrimSpace(string(out)) != want {
		t.Errorf("exit %d, output:\n%s\nwant exit 2 and:\n%s", exitCode(err), out, want)
	}
}

// Issue 17 item 2, review point 4: every file a build loads is an input
// no output may replace: the TensorRT library and ONNX parser (from
// --trt-lib, TRT_ACTION_RTX_LIB or TRT_ACTION_TRT_LIB), the backends'
// shared objects (TRT_ACTION_BACKEND_DIR) and the executable the workers
// run. The files here only have the libraries' names: finding them loads
// nothing.
func TestNoOutputIsWrittenOverWhatTheRunLoads(t *testing.T) {
	model := "version: 1\nbuilds:\n  - name: a\n    backend: BACKEND\n    onnx: m.onnx\n    engine: ENGINE\n"
	project := func(t *testing.T, backend, engine string) (string, map[string][]byte) {
		dir := t.TempDir()
		for _, name := range []string{"m.onnx", "rtx/libtensorrt_rtx.so.1", "rtx/libtensorrt_onnxparser_rtx.so.1",
			"trt/libnvinfer.so.10", "trt/libnvonnxparser.so.10", "be/libtam_rtx.so", "be/libtam_trt10.so", "be/libtam_trt11.so"} {
			writeFile(t, filepath.Join(dir, name), "stands in for "+name)
		}
		writeFile(t, filepath.Join(dir, "c.yml"), strings.NewReplacer("BACKEND", backend, "ENGINE", engine).Replace(model))
		return dir, snapshot(t, dir)
	}
	cases := []struct {
		name, backend, engine string
		env, args             []string
		want                  string
	}{
		{"--trt-lib's parser", "tensorrt-rtx", "out/a.engine", nil,
			[]string{"--trt-lib", "rtx", "--report", "rtx/libtensorrt_onnxparser_rtx.so.1"},
			`trt-action: --report "rtx/libtensorrt_onnxparser_rtx.so.1" is a library the tensorrt-rtx backend loads: the run would write over it`},
		{"TRT_ACTION_RTX_LIB's library", "tensorrt-rtx", "out/a.engine", []string{"TRT_ACTION_RTX_LIB=rtx"},
			[]string{"--junit", "rtx/libtensorrt_rtx.so.1"},
			`trt-action: --junit "rtx/libtensorrt_rtx.so.1" is a library the tensorrt-rtx backend loads`},
		{"TRT_ACTION_TRT_LIB's parser", "tensorrt", "out/a.engine", []string{"TRT_ACTION_TRT_LIB=trt"},
			[]string{"--events", "trt/libnvonnxparser.so.10"},
			`trt-action: --events "trt/libnvonnxparser.so.10" is a library the tensorrt backend loads`},
		{"the backend's shared object", "tensorrt-rtx", "out/a.engine", []string{"TRT_ACTION_RTX_LIB=rtx"},
			[]string{"--summary", "be/libtam_rtx.so"},
			`trt-action: --summary "be/libtam_rtx.so" is a shared object of the tensorrt-rtx backend`},
		{"either tensorrt flavour", "tensorrt", "out/a.engine", []string{"TRT_ACTION_TRT_LIB=trt"},
			[]string{"--report", "be/libtam_trt11.so"},
			`trt-action: --report "be/libtam_trt11.so" is a shared object of the tensorrt backend`},
		{"an engine over the library", "tensorrt-rtx", "rtx/libtensorrt_rtx.so.1", nil,
			[]string{"--trt-lib", "rtx"},
			`c.yml:6:5: engine "rtx/libtensorrt_rtx.so.1" of build "a" is a library the tensorrt-rtx backend loads`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, before := project(t, c.backend, c.engine)
			env := append([]string{"TRT_ACTION_BACKEND_DIR=be"}, c.env...)
			out, err := command(dir, env, append([]string{"build", "c.yml"}, c.args...)...).CombinedOutput()
			if code := exitCode(err); code != 2 || !strings.Contains(string(out), c.want) {
				t.Errorf("exit %d, want 2 and %q:\n%s", code, c.want, out)
			}
			if after := snapshot(t, dir); !maps.EqualFunc(before, after, bytes.Equal) {
				t.Errorf("files changed: %d before, %d after", len(before), len(after))
			}
		})
	}
	t.Run("validate", func(t *testing.T) {
		dir, _ := project(t, "tensorrt-rtx", "rtx/libtensorrt_onnxparser_rtx.so.1")
		out, err := command(dir, []string{"TRT_ACTION_BACKEND_DIR=be", "TRT_ACTION_RTX_LIB=rtx"}, "validate", "c.yml").CombinedOutput()
		want := `c.yml:6:5: engine "rtx/libtensorrt_onnxparser_rtx.so.1" of build "a" is a library the tensorrt-rtx backend loads: the run would write over it`
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), want) {
			t.Errorf("exit %d, want 2 and %q:\n%s", code, want, out)
		}
	})
	t.Run("the executable", func(t *testing.T) {
		dir, _ := project(t, "sim", "out/a.engine")
		bin := copyBinary(t)
		before, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		cmd := command(dir, nil, "build", "c.yml", "--report", bin)
		cmd.Path, cmd.Args[0] = bin, bin
		out, err := cmd.CombinedOutput()
		want := `trt-action: --report "` + bin + `" is the trt-action executable, which the workers run: the run would write over it`
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), want) {
			t.Errorf("exit %d, want 2 and %q:\n%s", code, want, out)
		}
		if after, _ := os.ReadFile(bin); !bytes.Equal(after, before) {
			t.Error("the executable was written over")
		}
	})
}

// Issue 17 item 2, review point 5: each engine is replaced by a rename, so
// engines that are hard links of each other (as the previous release
// delivered cache hits) are each built, and each gets its own file.
func TestEnginesThatAreHardLinksOfEachOtherAreEachReplaced(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.yml"), "version: 1\ndefaults: {backend: sim, sim: {step: 0s}}\nbuilds:\n"+
		"  - {name: mlp, engine: out/mlp.engine}\n  - {name: mlp2, engine: out/mlp2.engine}\n")
	writeFile(t, filepath.Join(dir, "out/mlp.engine"), "x\n")
	if err := os.Link(filepath.Join(dir, "out/mlp.engine"), filepath.Join(dir, "out/mlp2.engine")); err != nil {
		t.Fatal(err)
	}
	if out, err := command(dir, nil, "build", "c.yml").CombinedOutput(); exitCode(err) != 0 {
		t.Fatalf("exit %d, want 0:\n%s", exitCode(err), out)
	}
	a, errA := os.Stat(filepath.Join(dir, "out/mlp.engine"))
	b, errB := os.Stat(filepath.Join(dir, "out/mlp2.engine"))
	if errA != nil || errB != nil || os.SameFile(a, b) || a.Size() == 2 || b.Size() == 2 {
		t.Errorf("want two new engines, each a file of its own; got %v %v (same file: %v)", a, b, errA == nil && errB == nil && os.SameFile(a, b))
	}
}

// Issue 17 item 2, review point 8: a matrix with errors and outputs over
// its inputs gets both lists in one run, each file at the key that names
// it: the engine at engine:, the model at onnx:, a plugin at plugins:, the
// cache folder at dir:.
func TestMatrixErrorsAndCollisionsComeInOneRound(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.onnx"), "a model")
	writeFile(t, filepath.Join(dir, "c.yml"), `version: 1
cache:
  dir: .trt-cache
builds:
  - name: a
    backend: tensorrt-rtx
    onnx: m.onnx
    plugins: [m.onnx]
    engine: m.onnx
    opt-level: 9
  - {name: b, backend: sim, engine: .trt-cache/b.engine}
`)
	want := `c.yml:10:16: opt-level: expected an integer from 0 to 5, got "9"` + "\n" +
		`c.yml:9:5: engine "m.onnx" of build "a" is the model of build "a" (at c.yml:7:5): the run would write over it; give the output a path of its own` + "\n" +
		`c.yml:9:5: engine "m.onnx" of build "a" is a plugin of build "a" (at c.yml:8:5): the run would write over it; give the output a path of its own` + "\n" +
		`c.yml:11:29: engine ".trt-cache/b.engine" of build "b" lies inside ".trt-cache", the engine cache folder (at c.yml:3:3), which the run manages; put it elsewhere` + "\n"
	for _, args := range [][]string{{"validate", "c.yml"}, {"build", "c.yml"}} {
		out, err := command(dir, nil, args...).CombinedOutput()
		if code := exitCode(err); code != 2 || string(out) != want {
			t.Errorf("%s: exit %d, output:\n%s\nwant exit 2 and:\n%s", args[0], code, out, want)
		}
	}
}
