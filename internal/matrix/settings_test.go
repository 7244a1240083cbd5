package matrix

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
		"strongly-typed":         false,
		"plugins":                []string{lib},
		"plugins-serialize":      []string{lib},
		"precision-constraints":  "obey",
		"layer-precisions":       map[string]string{"/conv1/*": "fp32"},
		"layer-output-types":     map[string]string{"/fc/Gemm": "fp16"},
		"int8-calibration-cache": filepath.Join("testdata", "plugins", "calib.cache"),
		"tf32":                   false,
		"hardware-compatibility": "ampere-plus",
		"version-compatible":     true,
		"exclude-lean-runtime":   true,
		"refit":                  "identical",
		"strip-weights":          true,
		"weight-streaming":       true,
		"runtime-platform":       "windows-amd64",
		"tactic-sources":         []string{"+cublas", "-cudnn", "+jit-convolutions"},
		"max-tactics":            4,
		"sparsity":               "enable",
		"max-aux-streams":        2,
		"l2-limit-for-tiling":    int64(4 << 20),
		"memory-pools":           map[string]int64{"tactic-shared": 48 << 10},
		"profiling-verbosity":    "none",
		"preview-features":       []string{"-aliased-plugin-io-10-03"},
		"dla":                    DLA{Core: 1, GPUFallback: true},
		"builder-flags":          []string{"debug", "strict-nans"},
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
	if b := f.Builds[0]; b.TilingLevel == nil || *b.TilingLevel != 3 {
		t.Errorf("tiling-optimization-level = %v, want 3", b.TilingLevel)
	}
	if s := f.Builds[0].Shapes["input"]; !reflect.DeepEqual(s.Min, []int64{1, 3, 224, 224}) || !reflect.DeepEqual(s.Max, []int64{8, 3, 224, 224}) {
		t.Errorf("trtexec-form shapes = %+v", s)
	}
	if p := f.Builds[0].Settings[0].Pos; p.Line != 11 || p.Column != 5 {
		t.Errorf("strongly-typed position = %v, want line 11 column 5", p)
	}
}

// TestEverySettingReachesTheBackends checks the contract with the C++
// decoder (native/backends/request.h): every setting key, and every value
// a key allows, is known there, so no setting the matrix accepts can be
// refused as unknown (or lost) on its way to TensorRT.
func TestEverySettingReachesTheBackends(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "native", "backends", "request.h"))
	if err != nil {
		t.Fatal(err)
	}
	decoder := string(data)
	for _, spec := range settingSpecs {
		if !strings.Contains(decoder, `key == "`+spec.key+`"`) {
			t.Errorf("request.h does not decode %s", spec.key)
		}
		for _, v := range spec.values {
			if !strings.Contains(decoder, `"`+v+`"`) {
				t.Errorf("request.h does not allow %s value %s", spec.key, v)
			}
		}
	}
}
