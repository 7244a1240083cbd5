package realbuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/report"
)

// Optimization profiles of a real model (the onnx wheel's SqueezeNet, its
// batch made dynamic) on TensorRT-RTX.
func squeezenetProfile(min, opt, max int) string {
	return fmt.Sprintf(`{"data_0": {"min": [%d, 3, 224, 224], "opt": [%d, 3, 224, 224], "max": [%d, 3, 224, 224]}}`, min, opt, max)
}

var (
	profileA = squeezenetProfile(1, 1, 2)
	profileB = squeezenetProfile(2, 4, 4)
	profileC = squeezenetProfile(4, 8, 8)
)

const profilesMatrix = `version: 1
defaults: {backend: tensorrt-rtx, onnx: MODEL}
builds:
  - {name: two, engine: OUT/two.engine, profiles: [A, B]}
  - {name: three, engine: OUT/three.engine, profiles: [A, B, C]}
  - {name: swapped, engine: OUT/swapped.engine, profiles: [B, A]}
  - {name: one, engine: OUT/one.engine, profiles: [A]}
  - {name: shapes, engine: OUT/shapes.engine, shapes: A}
`

// A build with two or three profiles writes, byte for byte, the engine
// TensorRT-RTX's own Python API builds with add_optimization_profile once
// per profile in the same order (testdata/profiles.py); a list of one
// profile is the build shapes is (one engine, one cache key); and the
// profiles' order changes the engine, so it changes the key.
func TestProfilesBuildWhatThePythonAPIBuilds(t *testing.T) {
	e := newScriptEnv(t)
	ref, err := filepath.Abs("testdata/profiles.py")
	if err != nil {
		t.Fatal(err)
	}
	refDir := t.TempDir()
	model := filepath.Join(refDir, "squeezenet.onnx")
	plainRun(t, refDir, nil, e.python, ref, "model", model)

	src := strings.NewReplacer("MODEL", model, "[A, B, C]", "["+profileA+", "+profileB+", "+profileC+"]",
		"[A, B]", "["+profileA+", "+profileB+"]", "[B, A]", "["+profileB+", "+profileA+"]",
		"[A]", "["+profileA+"]", "shapes: A", "shapes: "+profileA).Replace(profilesMatrix)
	r := e.build(t, src)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.output)
	}
	rep := r.report(t)
	for _, name := range []string{"two", "three", "swapped", "one", "shapes"} {
		if b := findBuild(t, rep, name); b.Status != report.StatusOK {
			t.Fatalf("%s: %s (%s)", name, b.Status, b.Reason)
		}
	}
	if p, ok := findBuild(t, rep, "three").Settings.Applied["profiles"].([]any); !ok || len(p) != 3 {
		t.Errorf("three's settings.applied: %v, want its three profiles", findBuild(t, rep, "three").Settings.Applied)
	}

	for name, profiles := range map[string]string{
		"two":   "[" + profileA + ", " + profileB + "]",
		"three": "[" + profileA + ", " + profileB + ", " + profileC + "]",
		"one":   "[" + profileA + "]",
	} {
		python := filepath.Join(refDir, name+".engine")
		plainRun(t, refDir, nil, e.python, ref, "build", model, python, profiles)
		if ours, theirs := readEngine(t, r.outDir(), name), readEngine(t, refDir, name); !bytes.Equal(ours, theirs) {
			t.Errorf("%s: trt-action's engine (%d bytes) is not the Python API's (%d bytes)", name, len(ours), len(theirs))
		}
	}
	if one, shapes := readEngine(t, r.outDir(), "one"), readEngine(t, r.outDir(), "shapes"); !bytes.Equal(one, shapes) {
		t.Errorf("profiles: [A] built %d bytes, shapes: A %d: want one engine", len(one), len(shapes))
	}
	if two, swapped := readEngine(t, r.outDir(), "two"), readEngine(t, r.outDir(), "swapped"); bytes.Equal(two, swapped) {
		t.Errorf("the profiles' order did not change the engine (%d bytes)", len(two))
	}

	keys := planKeys(t, e.env, r)
	if keys["one"] == "" || keys["one"] != keys["shapes"] {
		t.Errorf("profiles: [A] has key %q, shapes: A %q: want one key", keys["one"], keys["shapes"])
	}
	if keys["two"] == "" || keys["two"] == keys["swapped"] || keys["two"] == keys["three"] {
		t.Errorf("keys %v: two, swapped and three want keys of their own", keys)
	}
}

func readEngine(t *testing.T, dir, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name+".engine"))
	if err != nil || len(data) == 0 {
		t.Fatalf("engine %s: %v (%d bytes)", name, err, len(data))
	}
	return data
}

// planKeys is each build's engine cache key, as plan --json gives it.
func planKeys(t *testing.T, e env, r run) map[string]string {
	t.Helper()
	out, err := e.command(t.Context(), "plan", "--json", "-f", filepath.Join(r.dir, "matrix.yml")).Output()
	if err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	var plan []struct {
		Name     string  `json:"name"`
		CacheKey *string `json:"cache_key"`
		Unknown  string  `json:"cache_key_unknown"`
	}
	if err := json.Unmarshal(out, &plan); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	keys := map[string]string{}
	for _, b := range plan {
		if b.CacheKey == nil {
			t.Fatalf("%s has no cache key: %s", b.Name, b.Unknown)
		}
		keys[b.Name] = *b.CacheKey
	}
	return keys
}
