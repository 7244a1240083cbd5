package matrix

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// expandedAxes expands a build matrix (over an optional top-level one)
// and renders each combination as "k=v ...", in expansion order.
func expandedAxes(t *testing.T, topMatrix, buildMatrix string) []string {
	t.Helper()
	w := &walker{file: "t.yml", stats: map[string]bool{}, axes: map[string]bool{}}
	read := func(src string, topLevel bool) *matrixSpec {
		if src == "" {
			return nil
		}
		root, ok := w.parseYAML([]byte(src))
		if !ok {
			t.Fatal(w.errs.result())
		}
		return w.readMatrix(root, "matrix", topLevel)
	}
	spec := combine(read(topMatrix, true), read(buildMatrix, false))
	combos := w.expand(spec, Pos{})
	if err := w.errs.result(); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(combos))
	for i, c := range combos {
		out[i] = axesText(c.asMap())
	}
	return out
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name       string
		top, build string
		want       []string
	}{
		{
			name: "no matrix is one build",
			want: []string{"-"},
		},
		{
			name:  "cartesian product, first axis slowest",
			build: "{id: [1, 2], p: [a, b]}",
			want:  []string{"id=1 p=a", "id=1 p=b", "id=2 p=a", "id=2 p=b"},
		},
		{
			name:  "exclude matches partially",
			build: "{id: [1, 2], p: [a, b], q: [x, y], exclude: [{id: 1, p: b}]}",
			want: []string{"id=1 p=a q=x", "id=1 p=a q=y",
				"id=2 p=a q=x", "id=2 p=a q=y", "id=2 p=b q=x", "id=2 p=b q=y"},
		},
		{
			name:  "include with only new keys extends every combination",
			build: "{id: [1, 2], include: [{color: green}]}",
			want:  []string{"color=green id=1", "color=green id=2"},
		},
		{
			name:  "include extends only combinations it agrees with",
			build: "{id: [1, 2], include: [{id: 2, big: yes}]}",
			want:  []string{"id=1", "big=yes id=2"},
		},
		{
			name:  "include that would overwrite an axis value is a new combination",
			build: "{id: [1, 2], include: [{id: 3, p: z}]}",
			want:  []string{"id=1", "id=2", "id=3 p=z"},
		},
		{
			name:  "later include overwrites an added value, never an original one",
			build: "{id: [1, 2], include: [{color: green}, {id: 1, color: pink}]}",
			want:  []string{"color=pink id=1", "color=green id=2"},
		},
		{
			name:  "include is applied after exclude",
			build: "{id: [1, 2], exclude: [{id: 2}], include: [{id: 2, p: again}]}",
			want:  []string{"id=1", "id=2 p=again"},
		},
		{
			name:  "new combinations from include are not extended by later includes",
			build: "{id: [1], include: [{id: 5}, {id: 6, extra: x}]}",
			want:  []string{"id=1", "id=5", "extra=x id=6"},
		},
		{
			name:  "include alone lists the combinations",
			build: "{include: [{id: 1}, {id: 2, p: b}]}",
			want:  []string{"id=1", "id=2 p=b"},
		},
		{
			name:  "top-level axes come first",
			top:   "{p: [a, b]}",
			build: "{id: [1, 2]}",
			want:  []string{"id=1 p=a", "id=2 p=a", "id=1 p=b", "id=2 p=b"},
		},
		{
			name:  "a build's axis replaces the top-level axis of that name",
			top:   "{id: [1, 2, 3], p: [a]}",
			build: "{id: [9]}",
			want:  []string{"id=9 p=a"},
		},
		{
			name:  "top-level exclude applies to builds that have its axes",
			top:   "{p: [a, b], exclude: [{p: b, id: 2}]}",
			build: "{id: [1, 2]}",
			want:  []string{"id=1 p=a", "id=2 p=a", "id=1 p=b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := expandedAxes(t, tt.top, tt.build)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestExpandIncludeRules walks every include rule of a workflow's
// strategy.matrix in one matrix, in the order the rules interact.
func TestExpandIncludeRules(t *testing.T) {
	src := `
model: [resnet, bert]
gpu: [a10, l4]
include:
  - tier: basic          # no axis keys: extends every combination
  - tier: fast           # agrees with gpu=l4 combinations: overwrites the added tier
    gpu: l4
  - model: resnet        # extends both resnet combinations
    batch: 8
  - model: vit           # matches nothing: a new combination
  - model: vit           # does not extend the new one: another combination
    gpu: l4
`
	got := expandedAxes(t, "", src)
	want := []string{
		"batch=8 gpu=a10 model=resnet tier=basic",
		"batch=8 gpu=l4 model=resnet tier=fast",
		"gpu=a10 model=bert tier=basic",
		"gpu=l4 model=bert tier=fast",
		"model=vit",
		"gpu=l4 model=vit",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSubstitution(t *testing.T) {
	src := `version: 1
defaults:
  engine: out/${{ matrix.p }}/${{matrix.b}}.engine
builds:
  - name: n-${{ matrix.p }}-${{  matrix.b  }}
    backend: sim
    opt-level: ${{ matrix.lvl }}
    precision: ["${{ matrix.p }}", int8]
    shapes: {x: {min: [1], opt: ["${{ matrix.b }}"], max: [64]}}
    matrix: {p: [fp16], b: [4, 16], include: [{lvl: 2}]}
`
	f, err := parseContent("dir/t.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b := f.Builds[1]
	level, _ := b.Settings.get("opt-level")
	got := fmt.Sprint(b.Name, " ", b.Engine, " ", level, " ", b.Precision, " ", b.Profiles[0]["x"].Opt)
	want := "n-fp16-16 dir/out/fp16/16.engine 2 [fp16 int8] [16]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDefaultsMergeDeeply(t *testing.T) {
	src := `version: 1
defaults:
  backend: sim
  budgets: {build: 10m, stall: 1m, phases: {"A": 1m, "B": 2m}}
builds:
  - name: x
    budgets: {stall: 5s, phases: {"B": 9s, "C": 3s}}
  - name: y
    backend: sim
    sim: {step: 5ms}
`
	f, err := parseContent("t.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x, y := f.Builds[0], f.Builds[1]
	if x.Budgets.Build.String() != "10m0s" || x.Budgets.Stall.String() != "5s" || x.Budgets.Grace != defaultGrace {
		t.Errorf("budgets not merged: %+v", x.Budgets)
	}
	var phases []string
	for _, p := range x.Budgets.Phases {
		phases = append(phases, p.Pattern+"="+p.Limit.String())
	}
	if got := strings.Join(phases, " "); got != "B=9s C=3s A=1m0s" {
		t.Errorf("phases = %s, want the build's own first, then inherited", got)
	}
	if x.Engine != "x.engine" || x.Sim.Step.String() != "2ms" || x.Sim.Threads != 4 || x.Sim.Fault.Kind != "none" {
		t.Errorf("defaults not applied: engine %q sim %+v", x.Engine, x.Sim)
	}
	if y.Sim.Step.String() != "5ms" {
		t.Errorf("explicit step lost: %v", y.Sim.Step)
	}
}

func TestSimStepDefaultsToTraceTiming(t *testing.T) {
	f, err := parseContent("testdata/t.yml", []byte("version: 1\nbuilds:\n  - {name: a, backend: sim, sim: {trace: traces/tiny.jsonl, fault: 'silence:1m'}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Builds[0].Sim
	if s.Step != 0 || s.Trace != "testdata/traces/tiny.jsonl" || s.Fault.Kind != "silence" || s.Fault.Duration.String() != "1m0s" {
		t.Errorf("sim = %+v", s)
	}
}

func TestTooManyCombinations(t *testing.T) {
	src := "version: 1\nbuilds:\n  - name: n\n    backend: sim\n    matrix:\n"
	for _, axis := range []string{"a", "b", "c", "d", "e"} {
		src += "      " + axis + ": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
	}
	_, err := parseContent("t.yml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "t.yml:3:5: matrix expands to more than 10000 combinations") {
		t.Errorf("got %v", err)
	}
}

func TestTopLevelExcludeSkipsBuildsWithoutItsAxis(t *testing.T) {
	src := `version: 1
matrix: {p: [a, b], exclude: [{p: b, q: y}]}
builds:
  - {name: "one-${{ matrix.p }}-${{ matrix.q }}", backend: sim, matrix: {q: [x, y]}}
  - {name: "two-${{ matrix.p }}", backend: sim}
`
	f, err := parseContent("t.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range f.Builds {
		names = append(names, b.Name)
	}
	want := "one-a-x one-a-y one-b-x two-a two-b"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// sim.engine-size takes a size as max-size does; a bad one is an error at
// its position that says what a size is.
func TestSimEngineSize(t *testing.T) {
	f, err := parseContent("testdata/t.yml", []byte("version: 1\nbuilds:\n  - {name: a, backend: sim, sim: {engine-size: 64MiB}}\n  - {name: b, backend: sim}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Builds[0].Sim.EngineSize; got != 64<<20 {
		t.Errorf("engine-size 64MiB = %d bytes", got)
	}
	if got := f.Builds[1].Sim.EngineSize; got != 0 {
		t.Errorf("no engine-size = %d, want 0 (the small engine)", got)
	}
	_, err = parseContent("testdata/t.yml", []byte("version: 1\nbuilds:\n  - {name: a, backend: sim, sim: {engine-size: 0}}\n"))
	if err == nil || !strings.Contains(err.Error(), "t.yml:3:48: sim.engine-size: invalid size \"0\"") {
		t.Errorf("engine-size 0: %v", err)
	}
}

// step: 0s replays without pacing; repeat multiplies the trace; other zero
// or negative values are still errors.
func TestSimStepZeroAndRepeat(t *testing.T) {
	f, err := parseContent("testdata/t.yml", []byte("version: 1\nbuilds:\n  - {name: a, backend: sim, sim: {step: 0s, repeat: 200}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Builds[0].Sim; !s.Fast || s.Step != 0 || s.Repeat != 200 {
		t.Errorf("sim = %+v, want fast, repeated 200 times", s)
	}
	if f, err := parseContent("testdata/t.yml", []byte("version: 1\nbuilds:\n  - {name: a, backend: sim}\n")); err != nil || f.Builds[0].Sim.Fast || f.Builds[0].Sim.Repeat != 1 {
		t.Errorf("defaults: %+v, %v", f.Builds[0].Sim, err)
	}
	_, err = parseContent("testdata/t.yml", []byte("version: 1\nbuilds:\n  - {name: a, backend: sim, sim: {step: -1s, repeat: 0}}\n"))
	if err == nil || !strings.Contains(err.Error(), "sim.step: duration must be greater than 0") || !strings.Contains(err.Error(), "sim.repeat") {
		t.Errorf("negative step and zero repeat: %v", err)
	}
}
