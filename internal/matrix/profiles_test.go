package matrix

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// profile is one optimization profile of a single input x of dims [N, 3].
func profile(min, opt, max int64) map[string]Shape {
	return map[string]Shape{"x": {Min: []int64{min, 3}, Opt: []int64{opt, 3}, Max: []int64{max, 3}}}
}

func parseBuilds(t *testing.T, src string) []Build {
	t.Helper()
	f, err := parseContent("/m/trt-builds.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f.Builds
}

// byName is the expanded builds by name.
func byName(builds []Build) map[string]Build {
	out := map[string]Build{}
	for _, b := range builds {
		out[b.Name] = b
	}
	return out
}

// Each item of profiles is one profile, in the order written; a list of
// one item is the same build as shapes with that item, shown as shapes
// (so plan --json, the report and the engine cache key cannot tell them
// apart).
func TestProfilesKeepTheirOrderAndOneIsShapes(t *testing.T) {
	builds := byName(parseBuilds(t, `version: 1
defaults: {backend: sim}
builds:
  - name: three
    profiles:
      - {x: {min: 1x3, opt: 2x3, max: 4x3}}
      - {x: {min: [4, 3], opt: [8, 3], max: [16, 3]}}
      - {x: {min: 16x3, opt: 16x3, max: 32x3}}
  - name: one
    profiles: [{x: {min: 1x3, opt: 2x3, max: 4x3}}]
  - name: shapes
    shapes: {x: {min: 1x3, opt: 2x3, max: 4x3}}
`))
	want := []map[string]Shape{profile(1, 2, 4), profile(4, 8, 16), profile(16, 16, 32)}
	three := builds["three"]
	if !reflect.DeepEqual(three.Profiles, want) {
		t.Errorf("profiles %v, want %v", three.Profiles, want)
	}
	if got := three.BuilderSettings(); !reflect.DeepEqual(got, map[string]any{"profiles": want}) {
		t.Errorf("settings %v, want the profiles in order, and no shapes", got)
	}
	one, shapes := builds["one"], builds["shapes"]
	if !reflect.DeepEqual(one.Profiles, shapes.Profiles) || !reflect.DeepEqual(one.BuilderSettings(), shapes.BuilderSettings()) {
		t.Errorf("a one-item profiles %v %v is not shapes %v %v", one.Profiles, one.BuilderSettings(), shapes.Profiles, shapes.BuilderSettings())
	}
	if got := shapes.BuilderSettings(); !reflect.DeepEqual(got, map[string]any{"shapes": profile(1, 2, 4)}) {
		t.Errorf("settings %v, want shapes alone", got)
	}
}

// profiles and shapes are one setting: a build's own replaces what its
// defaults (or their trtexec line) give in either form, as a list
// replaces a list; shapes over shapes still merge by input.
func TestProfilesAndDefaults(t *testing.T) {
	src := `version: 1
defaults:
  backend: sim
  profiles:
    - {x: {min: 1x3, opt: 2x3, max: 4x3}}
    - {x: {min: 4x3, opt: 8x3, max: 16x3}}
builds:
  - name: inherits
  - name: own-shapes
    shapes: {x: {min: 2x3, opt: 2x3, max: 2x3}}
  - name: own-profiles
    profiles:
      - {x: {min: 16x3, opt: 16x3, max: 32x3}}
      - {x: {min: 1x3, opt: 2x3, max: 4x3}}
  - name: line-over-defaults
    trtexec: --profile=0 --minShapes=x:2x3 --optShapes=x:2x3 --maxShapes=x:2x3
  - name: keys-over-line
    trtexec: --profile=0 --minShapes=x:1x3 --optShapes=x:2x3 --maxShapes=x:4x3 --profile=1 --minShapes=x:4x3 --optShapes=x:8x3 --maxShapes=x:16x3
    shapes: {x: {min: 2x3, opt: 2x3, max: 2x3}}
`
	builds := byName(parseBuilds(t, src))
	for name, want := range map[string][]map[string]Shape{
		"inherits":           {profile(1, 2, 4), profile(4, 8, 16)},
		"own-shapes":         {profile(2, 2, 2)},
		"own-profiles":       {profile(16, 16, 32), profile(1, 2, 4)},
		"line-over-defaults": {profile(2, 2, 2)},
		"keys-over-line":     {profile(2, 2, 2)},
	} {
		if got := builds[name].Profiles; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: profiles %v, want %v", name, got, want)
		}
	}

	// A build's shapes over its defaults' shapes merge by input, as before.
	merged := parseBuilds(t, `version: 1
defaults:
  backend: sim
  shapes: {x: {min: 1x3, opt: 2x3, max: 4x3}}
builds:
  - name: b
    shapes: {y: {min: [1], opt: [1], max: [1]}}
`)[0]
	if got := merged.Profiles; len(got) != 1 || len(got[0]) != 2 {
		t.Errorf("shapes over shapes: %v, want x and y in one profile", got)
	}
	// A defaults' profiles list meets a build's shapes only through the rule above.
	replaced := parseBuilds(t, `version: 1
defaults:
  backend: sim
  shapes: {x: {min: 1x3, opt: 2x3, max: 4x3}}
builds:
  - name: b
    profiles: [{y: {min: [1], opt: [1], max: [1]}}, {y: {min: [2], opt: [2], max: [2]}}]
`)[0]
	if got := replaced.Profiles; len(got) != 2 || len(got[0]) != 1 || len(got[1]) != 1 {
		t.Errorf("profiles over shapes: %v, want the build's two profiles of y alone", got)
	}
}

// ${{ matrix.X }} works inside items, as in shapes.
func TestProfilesTakeMatrixValues(t *testing.T) {
	builds := byName(parseBuilds(t, `version: 1
builds:
  - name: b${{ matrix.batch }}
    backend: sim
    profiles:
      - {x: {min: 1x3, opt: 1x3, max: "${{ matrix.batch }}x3"}}
      - {x: {min: ["${{ matrix.batch }}", 3], opt: ["${{ matrix.batch }}", 3], max: 64x3}}
    matrix: {batch: [8, 16]}
`))
	for batch, want := range map[string][]map[string]Shape{
		"b8":  {profile(1, 1, 8), profile(8, 8, 64)},
		"b16": {profile(1, 1, 16), profile(16, 16, 64)},
	} {
		if got := builds[batch].Profiles; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", batch, got, want)
		}
	}
}

// plan --trtexec writes each profile as trtexec reads it, --profile=N then
// its shape flags, and the line reads back as the same build.
func TestPlanTrtexecWritesProfileGroups(t *testing.T) {
	onnx := mustAbs(t, "testdata/models/tiny.onnx")
	src := `version: 1
builds:
  - name: p
    backend: tensorrt
    onnx: ` + onnx + `
    profiles:
      - {x: {min: 1x3, opt: 2x3, max: 4x3}}
      - {x: {min: 4x3, opt: 8x3, max: 16x3}}
`
	b := parseBuilds(t, src)[0]
	var got bytes.Buffer
	PlanTrtexec(&got, []Build{b})
	want := "# p\ntrtexec --onnx=" + onnx + " --saveEngine=/m/p.engine --profile=0 --minShapes=x:1x3 --optShapes=x:2x3 --maxShapes=x:4x3" +
		" --profile=1 --minShapes=x:4x3 --optShapes=x:8x3 --maxShapes=x:16x3\n"
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want)
	}
}

// Every line of testdata/trtexec/lines.txt that gives profiles reads back
// from what plan --trtexec writes for it as the same build.
func TestTrtexecProfileLinesSurviveTheRoundTrip(t *testing.T) {
	dir := mustAbs(t, filepath.Join("testdata", "trtexec")) // the line written names absolute paths
	n := 0
	for _, line := range trtexecLines(t) {
		if !strings.Contains(line, "--profile=") {
			continue
		}
		n++
		f, err := parseLine(t, dir, line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		b := f.Builds[0]
		written, missing, _ := trtexecLine(b)
		if len(missing) > 0 {
			t.Errorf("%s: the line cannot say %v", line, missing)
		}
		back, err := parseLine(t, dir, written)
		if err != nil {
			t.Fatalf("%s does not read back: %v", written, err)
		}
		if got := back.Builds[0]; !reflect.DeepEqual(got.BuilderSettings(), b.BuilderSettings()) || got.Engine != b.Engine {
			t.Errorf("%s\nwrote %s\nread back %v, want %v", line, written, got.BuilderSettings(), b.BuilderSettings())
		}
	}
	if n < 2 {
		t.Errorf("%d lines with --profile in lines.txt, want the public one and the several-profile one", n)
	}
}
