package cache

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/matrix"
)

// keyEnv is the fixed environment of the key tests.
var keyEnv = Env{Library: "libtensorrt_rtx.so.1 gnu-build-id 00; libtensorrt_onnxparser_rtx.so.1 gnu-build-id 01"}

// project copies the external-data model into a fresh folder with a
// plugin and a calibration cache, and returns the folder.
func project(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "onnx", "testdata", "external") // the walker's model with external data
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(dir, "models", rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"plugin.so": "plugin v1", "calib.cache": "calibration v1", "trace.jsonl": "{}\n"} {
		if err := writeFile(filepath.Join(dir, name), []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// parseBuild parses a one-build matrix in dir; build is the build's body,
// indented as a list item's keys.
func parseBuild(t *testing.T, dir, build string) matrix.Build {
	t.Helper()
	path := filepath.Join(dir, "trt-builds.yml")
	if err := os.WriteFile(path, []byte("version: 1\nbuilds:\n  - "+strings.TrimSpace(build)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := matrix.Load(path)
	if err != nil {
		t.Fatalf("matrix: %v", err)
	}
	return m.Builds[0]
}

// rtxBuild is the build the key tests vary, written as a matrix would.
const rtxBuild = `name: mlp
    backend: tensorrt-rtx
    onnx: models/model.onnx
    engine: out/mlp.engine
    targets: [sm89, sm80]
    shapes: {X: {min: [1, 2], opt: [4, 2], max: [8, 2]}}
    plugins: [plugin.so]
    workspace: 1GiB
    budgets: {build: 10m}`

func keyOf(t *testing.T, dir, build string) Key {
	t.Helper()
	k, err := NewHasher().Key(context.Background(), parseBuild(t, dir, build), keyEnv)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKeyGolden pins what a key means: the canonical document and its
// SHA-256 for fixed inputs. When it fails, the meaning of a key changed:
// bump FormatVersion (so old entries are never taken for new ones), then
// run with -update.
func TestKeyGolden(t *testing.T) {
	dir := project(t)
	h := NewHasher()
	b := parseBuild(t, dir, rtxBuild)
	doc, _, err := h.document(context.Background(), b, keyEnv)
	if err != nil {
		t.Fatal(err)
	}
	k, err := h.Key(context.Background(), b, keyEnv)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "key.golden", string(doc)+"\n"+string(k)+"\n")
	if t.Failed() {
		t.Log("the meaning of a key changed: bump FormatVersion (old entries must not be taken for new ones), then go test -update")
	}
	if !k.Valid() {
		t.Errorf("key %q is not 64 lowercase hex digits", k)
	}
}

// TestKeyChangesWithWhatDecidesTheEngine changes one byte of each input
// file and one setting at a time.
func TestKeyChangesWithWhatDecidesTheEngine(t *testing.T) {
	dir := project(t)
	base := keyOf(t, dir, rtxBuild)
	flip := func(rel string) func() {
		return func() {
			p := filepath.Join(dir, rel)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			orig := bytes.Clone(data)
			data[len(data)-1] ^= 1
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.WriteFile(p, orig, 0o644) })
		}
	}
	files := []string{"models/model.onnx", "models/weights.bin", "models/const.bin", "models/sub/then.bin",
		"models/sparse.bin", "models/function.bin", "plugin.so"}
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			flip(rel)()
			if k := keyOf(t, dir, rtxBuild); k == base {
				t.Errorf("one byte of %s changed, the key did not", rel)
			}
		})
	}
	settings := map[string]string{
		"opt-level":           "opt-level: 5",
		"targets":             "targets: [sm89]",
		"shapes":              "shapes: {X: {min: [1, 2], opt: [2, 2], max: [8, 2]}}",
		"workspace":           "workspace: 2GiB",
		"profiling-verbosity": "profiling-verbosity: detailed",
		"tf32":                "tf32: false",
		"tactic-sources":      "tactic-sources: -jit-convolutions",
	}
	for name, line := range settings {
		t.Run(name, func(t *testing.T) {
			if k := keyOf(t, dir, withLine(rtxBuild, line)); k == base {
				t.Errorf("%s changed, the key did not", line)
			}
		})
	}
	t.Run("backend", func(t *testing.T) {
		noTargets := strings.Replace(rtxBuild, "    targets: [sm89, sm80]\n", "", 1)
		if keyOf(t, dir, noTargets) == keyOf(t, dir, withLine(noTargets, "backend: sim")) {
			t.Error("the backend did not change the key")
		}
	})
	t.Run("library and target", func(t *testing.T) {
		b := parseBuild(t, dir, rtxBuild)
		for _, env := range []Env{{Library: keyEnv.Library + "x"}, {Library: keyEnv.Library, Target: "NVIDIA L4 sm89"}} {
			if k, _ := NewHasher().Key(context.Background(), b, env); k == base {
				t.Errorf("env %+v gives the same key", env)
			}
		}
	})
}

// A list of one optimization profile is the build shapes is: one key.
// Several profiles have another, and their order is part of it (profile i
// is the engine's profile i).
func TestKeyOfProfiles(t *testing.T) {
	dir := project(t)
	withProfiles := func(profiles string) string {
		return withLine(strings.Replace(rtxBuild, "    shapes: {X: {min: [1, 2], opt: [4, 2], max: [8, 2]}}\n", "", 1), "profiles: "+profiles)
	}
	const a, b, c = "{X: {min: [1, 2], opt: [4, 2], max: [8, 2]}}", "{X: {min: [8, 2], opt: [16, 2], max: [32, 2]}}", "{X: {min: [32, 2], opt: [32, 2], max: [64, 2]}}"
	if shapes, one := keyOf(t, dir, rtxBuild), keyOf(t, dir, withProfiles("["+a+"]")); shapes != one {
		t.Errorf("profiles: [A] has key %s, shapes: A %s: want one key", one, shapes)
	}
	keys := map[Key]string{}
	for _, list := range []string{"[" + a + "]", "[" + a + ", " + b + "]", "[" + b + ", " + a + "]", "[" + a + ", " + b + ", " + c + "]"} {
		k := keyOf(t, dir, withProfiles(list))
		if other, dup := keys[k]; dup {
			t.Errorf("profiles %s and %s have one key", other, list)
		}
		keys[k] = list
	}
}

// withLine replaces the build's key of the same name, or adds the line.
func withLine(build, line string) string {
	key, _, _ := strings.Cut(line, ":")
	var out []string
	replaced := false
	for _, l := range strings.Split(build, "\n") {
		if k, _, _ := strings.Cut(strings.TrimSpace(l), ":"); k == key {
			l, replaced = strings.Repeat(" ", len(l)-len(strings.TrimLeft(l, " ")))+line, true
		}
		out = append(out, l)
	}
	if !replaced {
		out = append(out, "    "+line)
	}
	return strings.Join(out, "\n")
}

// TestKeyIgnoresWhatDoesNotDecideTheEngine: names, budgets, output paths,
// the timing cache, the model's own path, and defaults written out.
func TestKeyIgnoresWhatDoesNotDecideTheEngine(t *testing.T) {
	dir := project(t)
	base := keyOf(t, dir, rtxBuild)
	same := map[string]string{
		"name":                "name: renamed",
		"engine":              "engine: elsewhere/other.engine",
		"budgets":             "budgets: {build: 1h, stall: 1m}",
		"targets order":       "targets: [sm80, sm89, sm80]",
		"opt-level default":   "opt-level: 3",
		"tiling default":      "tiling-optimization-level: 0",
		"tf32 default":        "tf32: true",
		"precision tf32":      "precision: [tf32]", // TF32 is on by default: the same engine
		"verbosity default":   "profiling-verbosity: layer-names-only",
		"hardware default":    "hardware-compatibility: none",
		"refit default":       "refit: none",
		"sparsity default":    "sparsity: disable",
		"platform default":    "runtime-platform: same-as-build",
		"version-compatible":  "version-compatible: false",
		"workspace in bytes":  "workspace: 1073741824",
		"sim settings (rtx)":  "sim: {threads: 2}",
		"tactic toggles":      "tactic-sources: [+jit-convolutions, -edge-mask-convolutions]",
		"tactic toggles, str": "tactic-sources: \"-edge-mask-convolutions,-jit-convolutions,+jit-convolutions\"",
	}
	toggled := keyOf(t, dir, withLine(rtxBuild, same["tactic toggles"]))
	for name, line := range same {
		t.Run(name, func(t *testing.T) {
			want := base
			if strings.HasPrefix(name, "tactic toggles") {
				want = toggled
			}
			if k := keyOf(t, dir, withLine(rtxBuild, line)); k != want {
				t.Errorf("%q changed the key", line)
			}
		})
	}
	t.Run("model moved", func(t *testing.T) {
		if err := os.Rename(filepath.Join(dir, "models"), filepath.Join(dir, "moved")); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(filepath.Join(dir, "moved"), filepath.Join(dir, "models"))
		if k := keyOf(t, dir, withLine(rtxBuild, "onnx: moved/model.onnx")); k != base {
			t.Error("moving the model with its external data changed the key")
		}
	})
}

// TestKeyLayerTypesByWhatDecides: of layer-precisions and
// layer-output-types, the order exact names are written in decides nothing
// (an exact name wins whatever the order), nor does where "*" is (it loses
// to every other pattern); the order of the other globs does (the first
// written wins), and so does each name and type.
func TestKeyLayerTypesByWhatDecides(t *testing.T) {
	dir := project(t)
	for _, key := range []string{"layer-precisions", "layer-output-types"} {
		t.Run(key, func(t *testing.T) {
			of := func(types string) Key {
				return keyOf(t, dir, "name: mlp\n    backend: tensorrt\n    onnx: models/model.onnx\n    "+key+": "+types)
			}
			for _, same := range [][2]string{
				{`{a: fp16, b: fp32}`, `{b: fp32, a: fp16}`},
				{`{"*": fp16, a: fp32, "/x/*": int8, b: bf16}`, `{b: bf16, "/x/*": int8, a: fp32, "*": fp16}`},
			} {
				if of(same[0]) != of(same[1]) {
					t.Errorf("%s and %s build the same engine, but their keys differ", same[0], same[1])
				}
			}
			for _, differ := range [][2]string{
				{`{"/x/*": fp16, "*y*": fp32}`, `{"*y*": fp32, "/x/*": fp16}`},
				{`{a: fp16}`, `{a: fp32}`},
				{`{a: fp16}`, `{"a*": fp16}`},
				{`{a: fp16}`, `{b: fp16}`},
				{`{"*": fp16}`, `{"*": fp32}`},
			} {
				if of(differ[0]) == of(differ[1]) {
					t.Errorf("%s and %s share a key", differ[0], differ[1])
				}
			}
		})
	}
}

// TestKeyTimingCacheLeftOut: a timing cache speeds a build, it does not
// decide the engine (backend tensorrt; tensorrt-rtx refuses one).
func TestKeyTimingCacheLeftOut(t *testing.T) {
	dir := project(t)
	b := strings.Replace(rtxBuild, "backend: tensorrt-rtx", "backend: tensorrt", 1)
	b = strings.Replace(b, "    targets: [sm89, sm80]\n", "", 1)
	if keyOf(t, dir, b) != keyOf(t, dir, withLine(b, "timing-cache: cache/t.cache")) {
		t.Error("a timing cache changed the key")
	}
}

// TestKeyFileSettings: every file-valued setting counts by content.
func TestKeyFileSettings(t *testing.T) {
	dir := project(t)
	const trt = `name: int8
    backend: tensorrt
    onnx: models/model.onnx
    precision: [int8, fp16]
    int8-calibration-cache: calib.cache
    plugins-serialize: plugin.so`
	base := keyOf(t, dir, trt)
	for _, name := range []string{"calib.cache", "plugin.so"} {
		p := filepath.Join(dir, name)
		old, _ := os.ReadFile(p)
		if err := os.WriteFile(p, append(old, '!'), 0o644); err != nil {
			t.Fatal(err)
		}
		if keyOf(t, dir, trt) == base {
			t.Errorf("a changed %s left the key as it was", name)
		}
		if err := os.WriteFile(p, old, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if keyOf(t, dir, withLine(trt, "precision: [fp16, int8, fp16]")) != base {
		t.Error("precision is a set: order and repeats changed the key")
	}
	// tf32 (on by default) and fp32 (always allowed) ask for nothing more.
	if keyOf(t, dir, withLine(trt, "precision: [tf32, int8, fp32, fp16]")) != base {
		t.Error("tf32 and fp32 in precision changed the key")
	}
	if keyOf(t, dir, withLine(trt, "precision: [int8]")) == base {
		t.Error("fp16 left precision, the key stayed")
	}
	// best is fp16, int8 and bf16, which the backends set as if written.
	best := keyOf(t, dir, withLine(trt, "precision: [best]"))
	if best != keyOf(t, dir, withLine(trt, "precision: [bf16, int8, fp16]")) || best != keyOf(t, dir, withLine(trt, "precision: [fp16, best]")) {
		t.Error("precision best and the three it stands for have different keys")
	}
	if best == base {
		t.Error("best adds bf16 to fp16 and int8, and the key stayed")
	}
}

// TestKeySim: a simulated build's key has its trace's bytes and its
// replay settings, so a demo run twice hits.
func TestKeySim(t *testing.T) {
	dir := project(t)
	const sim = `name: demo
    backend: sim
    sim: {trace: trace.jsonl, step: 1ms}`
	base := keyOf(t, dir, sim)
	if keyOf(t, dir, strings.Replace(sim, "step: 1ms", "step: 2ms", 1)) == base {
		t.Error("sim.step did not change the key")
	}
	if keyOf(t, dir, strings.Replace(sim, "name: demo", "name: other", 1)) != base {
		t.Error("the name changed the key")
	}
	sized := strings.Replace(sim, "step: 1ms", "step: 1ms, engine-size: 1MiB", 1)
	if keyOf(t, dir, sized) == base || keyOf(t, dir, sized) == keyOf(t, dir, strings.Replace(sized, "1MiB", "2MiB", 1)) {
		t.Error("sim.engine-size did not change the key")
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte("{}\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if keyOf(t, dir, sim) == base {
		t.Error("the trace's bytes did not change the key")
	}
}

// TestKeyMissingExternalData names the model and the file.
func TestKeyMissingExternalData(t *testing.T) {
	dir := project(t)
	b := parseBuild(t, dir, rtxBuild)
	if err := os.Remove(filepath.Join(dir, "models", "sub", "then.bin")); err != nil {
		t.Fatal(err)
	}
	_, err := NewHasher().Key(context.Background(), b, keyEnv)
	if err == nil {
		t.Fatal("no error for a missing external-data file")
	}
	for _, want := range []string{filepath.Join(dir, "models", "model.onnx"), `"sub/then.bin"`, filepath.Join(dir, "models", "sub", "then.bin"), "not found"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestHasherRemembersFiles: a file is read once per version. Content
// changed behind the same size and modification time is not seen (that
// is the memo); a new modification time is.
func TestHasherRemembersFiles(t *testing.T) {
	dir := project(t)
	b := parseBuild(t, dir, rtxBuild)
	h := NewHasher()
	first, err := h.Key(context.Background(), b, keyEnv)
	if err != nil {
		t.Fatal(err)
	}
	weights := filepath.Join(dir, "models", "weights.bin")
	fi, err := os.Stat(weights)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(weights)
	data[0] ^= 1
	if err := os.WriteFile(weights, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(weights, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if k, _ := h.Key(context.Background(), b, keyEnv); k != first {
		t.Error("the hasher read a file again whose size and modification time had not changed")
	}
	if k, _ := NewHasher().Key(context.Background(), b, keyEnv); k == first {
		t.Error("a new hasher did not see the changed file")
	}
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(weights, later, later); err != nil {
		t.Fatal(err)
	}
	if k, _ := h.Key(context.Background(), b, keyEnv); k == first {
		t.Error("the hasher kept a file's hash after its modification time changed")
	}
}

// sparse makes path a sparse file of size bytes: gigabytes that take no
// disk, and take as long to hash as a real model of that size.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// Hashing a model of many gigabytes (the model itself, or its external
// data) stops when the key's context ends, with its cause: a build's
// budget or a signal stops it. Before, Key read every byte whatever
// happened meanwhile.
func TestKeyStopsWithItsContext(t *testing.T) {
	for _, big := range []string{"models/model.onnx", "models/weights.bin"} {
		t.Run(big, func(t *testing.T) {
			dir := project(t)
			b := parseBuild(t, dir, rtxBuild) // parsed while the model is whole
			sparse(t, filepath.Join(dir, big), 16<<30)
			stop := errors.New("the build's budget ran out")
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(50*time.Millisecond, func() { cancel(stop) })
			k, err := NewHasher().Key(ctx, b, keyEnv)
			if !errors.Is(err, stop) || k != "" {
				t.Fatalf("Key of a 16 GiB %s stopped after 50 ms: %q, %v; want the stop's cause", big, k, err)
			}
			if !strings.Contains(err.Error(), filepath.Join(dir, big)) {
				t.Errorf("the error does not name the file being read: %v", err)
			}
		})
	}
}
