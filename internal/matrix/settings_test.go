package matrix

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/text"
)

// TestSettingsDecode checks what each kind of setting decodes to, from
// defaults, a build and a matrix axis.
func TestSettingsDecode(t *testing.T) {
	src := `version: 1
defaults:
  backend: tensorrt
  onnx: models/tiny.onnx
  memory-pools: {tactic-shared: 48KiB}
builds:
  - name: all-${{ matrix.pv }}
    matrix:
      pv: [none, detailed]
    profiling-verbosity: ${{ matrix.pv }}
    strongly-typed: false
    precision: [fp16, int8]
    plugins: plugins/fake-plugin
    plugins-serialize: [plugins/fake-plugin]
    precision-constraints: obey
    layer-precisions: {"/conv1/*": fp32}
    layer-output-types: {"/fc/Gemm": fp16}
    int8-calibration-cache: plugins/calib.cache
    tf32: false
    hardware-compatibility: ampere-plus
    version-compatible: true
    exclude-lean-runtime: true
    refit: identical
    strip-weights: true
    weight-streaming: true
    runtime-platform: windows-amd64
    tactic-sources: "+cublas, -cudnn, jit-convolutions"
    max-tactics: 4
    sparsity: enable
    max-aux-streams: 2
    tiling-optimization-level: 3
    l2-limit-for-tiling: 4MiB
    preview-features: [-aliased-plugin-io-10-03]
    dla: {core: 1, gpu-fallback: true}
    builder-flags: [debug, strict-nans]
    shapes:
      input: {min: 1x3x224x224, opt: [4, 3, 224, 224], max: 8x3x224x224}
`
	path := filepath.Join("testdata", "inline.yml")
	f, err := parseContent(path, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Builds) != 2 {
		t.Fatalf("got %d builds, want 2", len(f.Builds))
	}
	lib := filepath.Join("testdata", "plugins", "fake-plugin")
	want := map[string]any{
		"strongly-typed":            false,
		"plugins":                   []string{lib},
		"plugins-serialize":         []string{lib},
		"precision-constraints":     "obey",
		"layer-precisions":          []LayerType{{Layer: "/conv1/*", Type: "fp32"}},
		"layer-output-types":        []LayerType{{Layer: "/fc/Gemm", Type: "fp16"}},
		"int8-calibration-cache":    filepath.Join("testdata", "plugins", "calib.cache"),
		"tf32":                      false,
		"hardware-compatibility":    "ampere-plus",
		"version-compatible":        true,
		"exclude-lean-runtime":      true,
		"refit":                     "identical",
		"strip-weights":             true,
		"weight-streaming":          true,
		"runtime-platform":          "windows-amd64",
		"tactic-sources":            []string{"+cublas", "-cudnn", "+jit-convolutions"},
		"max-tactics":               4,
		"sparsity":                  "enable",
		"max-aux-streams":           2,
		"l2-limit-for-tiling":       int64(4 << 20),
		"memory-pools":              map[string]int64{"tactic-shared": 48 << 10},
		"profiling-verbosity":       "none",
		"preview-features":          []string{"-aliased-plugin-io-10-03"},
		"tiling-optimization-level": 3,
		"dla":                       DLA{Core: 1, GPUFallback: true},
		"builder-flags":             []string{"debug", "strict-nans"},
	}
	got := f.Builds[0].Settings.Map()
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d settings, want %d: %v", len(got), len(want), got)
	}
	if v, _ := f.Builds[1].Settings.get("profiling-verbosity"); v != "detailed" {
		t.Errorf("the matrix axis gave profiling-verbosity %v, want detailed", v)
	}
	if s := f.Builds[0].Profiles[0]["input"]; !reflect.DeepEqual(s.Min, []int64{1, 3, 224, 224}) || !reflect.DeepEqual(s.Max, []int64{8, 3, 224, 224}) {
		t.Errorf("trtexec-form shapes = %+v", s)
	}
	for _, s := range f.Builds[0].Settings {
		if s.Key == "strongly-typed" && (s.Pos.Line != 11 || s.Pos.Column != 5) {
			t.Errorf("strongly-typed position = %v, want line 11 column 5", s.Pos)
		}
	}
}

// TestExactSizesReadBack: the summary shows a size as text.ExactSize writes
// it, which reads back as the same number of bytes.
func TestExactSizesReadBack(t *testing.T) {
	for _, n := range []int64{1, 999, 1 << 10, 48 << 10, 1 << 30, 3 << 30, 1_500_000_000, 4_000_000, 1<<40 + 1} {
		if back, err := text.ParseBytes(text.ExactSize(n)); err != nil || back != n {
			t.Errorf("%d is shown as %s, which reads back as %d (%v)", n, text.ExactSize(n), back, err)
		}
	}
}

// TestTargetsAndPrecisionAreSets: a repeated target builds no other engine
// than the list without the repeat, and the order written does not matter:
// the build (and so the backend and the cache key) gets one list, in the
// table's order.
func TestTargetsAndPrecisionAreSets(t *testing.T) {
	src := `version: 1
defaults: {onnx: models/tiny.onnx}
builds:
  - {name: a, backend: tensorrt-rtx, targets: [sm86, sm86, sm89]}
  - {name: b, backend: tensorrt-rtx, targets: [sm89, sm86]}
  - {name: c, backend: tensorrt, precision: [int8, fp16, int8]}
`
	f, err := parseContent(filepath.Join("testdata", "sets.yml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range f.Builds[:2] {
		if !reflect.DeepEqual(b.Targets, []string{"sm86", "sm89"}) {
			t.Errorf("%s: targets %v, want [sm86 sm89]", b.Name, b.Targets)
		}
	}
	if p := f.Builds[2].Precision; !reflect.DeepEqual(p, []string{"fp16", "int8"}) {
		t.Errorf("precision %v, want [fp16 int8]", p)
	}
}

// TestRequirementsFollowWhatAValueImplies: int8-calibration-cache needs
// precision to ask for int8, and best does (it is fp16, int8 and bf16),
// written as a key or as trtexec's --best.
func TestRequirementsFollowWhatAValueImplies(t *testing.T) {
	for _, c := range []struct {
		build string
		ok    bool
	}{
		{"precision: [best], int8-calibration-cache: plugins/calib.cache", true},
		{"precision: [fp16, int8], int8-calibration-cache: plugins/calib.cache", true},
		{`trtexec: "--best --calib=plugins/calib.cache"`, true},
		{"precision: [fp16, bf16], int8-calibration-cache: plugins/calib.cache", false},
		{`trtexec: "--fp16 --calib=plugins/calib.cache"`, false},
	} {
		src := "version: 1\nbuilds:\n  - {name: b, backend: tensorrt, onnx: models/tiny.onnx, " + c.build + "}\n"
		_, err := parseContent(filepath.Join("testdata", "needs.yml"), []byte(src))
		if c.ok && err != nil || !c.ok && (err == nil || !strings.Contains(err.Error(), "int8-calibration-cache needs precision to include int8")) {
			t.Errorf("%s: got %v", c.build, err)
		}
	}
}
