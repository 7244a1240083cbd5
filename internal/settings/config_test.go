package settings

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A config as the hook reads it from TensorRT-RTX 1.7's Python API after a
// script set fp16-free settings of its own: the values it changed come out
// under the matrix's keys, the defaults do not.
func TestFromConfigNamesWhatAScriptSet(t *testing.T) {
	var c Config
	raw := `{"flags":["TF32","REFIT_IDENTICAL","STRIP_PLAN","DEBUG"],
	  "memory_pools":{"WORKSPACE":1073741824,"TACTIC_SHARED_MEMORY":49152},
	  "attrs":{"builder_optimization_level":5,"max_aux_streams":-1,"max_num_tactics":-1,"l2_limit_for_tiling":0,
	           "profiling_verbosity":{"name":"DETAILED","value":2},"tiling_optimization_level":{"name":"FAST","value":1},
	           "runtime_platform":"SAME_AS_BUILD",
	           "build_route":"","plugins_to_serialize":["a.so"],"engine_capability":{"name":"STANDARD","value":0}},
	  "quantization_flags":[],
	  "tactic_sources":["JIT_CONVOLUTIONS"],
	  "compute_capabilities":["SM89","SM120"],
	  "profiles":[{"input":{"min":[1,3],"opt":[4,3],"max":[8,3]}},{"input":{"min":[1,3],"opt":[1,3],"max":[1,3]}}]}`
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	got := FromConfig(c)
	want := map[string]any{
		"opt-level":                 5,
		"tiling-optimization-level": 1,
		"profiling-verbosity":       "detailed",
		"refit":                     "identical",
		"strip-weights":             true,
		"builder-flags":             []string{"debug"},
		"memory-pools":              map[string]int64{"workspace": 1 << 30, "tactic-shared": 49152},
		"tactic-sources":            []string{"+jit-convolutions"},
		"targets":                   []string{"sm89", "sm120"},
		// Both profiles, in order; shapes is for a config of one.
		"profiles": []map[string]Shape{{"input": {Min: []int64{1, 3}, Opt: []int64{4, 3}, Max: []int64{8, 3}}},
			{"input": {Min: []int64{1, 3}, Opt: []int64{1, 3}, Max: []int64{1, 3}}}},
		// Bool settings read from flags are always known; those at their
		// default are left out (tf32 true, the rest false).
	}
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s = %#v (a default, or something the config did not set)", k, v)
		}
	}
}

// A config of one optimization profile shows it as shapes, as a matrix
// build shows a profiles list of one item.
func TestFromConfigShowsOneProfileAsShapes(t *testing.T) {
	one := map[string]Shape{"input": {Min: []int64{1, 3}, Opt: []int64{4, 3}, Max: []int64{8, 3}}}
	got := FromConfig(Config{Flags: []string{"TF32"}, Profiles: []map[string]Shape{one}})
	if !reflect.DeepEqual(got, map[string]any{"shapes": one}) {
		t.Errorf("one profile: %#v, want it as shapes alone", got)
	}
	if got := FromConfig(Config{Flags: []string{"TF32"}}); len(got) != 0 {
		t.Errorf("no profile: %#v, want nothing", got)
	}
}

// Every property FromConfig reads names a row's Python attribute once.
func TestPythonAttributesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, row := range All() {
		if row.Python == "" {
			continue
		}
		if other, dup := seen[row.Python]; dup {
			t.Errorf("%s and %s both read %s", other, row.Key, row.Python)
		}
		seen[row.Python] = row.Key
	}
	if len(seen) < 8 {
		t.Errorf("only %d settings name their Python property", len(seen))
	}
}
