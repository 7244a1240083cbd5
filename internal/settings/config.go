package settings

import (
	"encoding/json"
	"slices"
	"strings"
)

// Config is a builder config as trt-action's Python hook reads it from a
// builder script's IBuilderConfig when a build begins, in the names of
// TensorRT's Python API (python/src/infer/pyCore.cpp in NVIDIA/TensorRT):
// enum members without the C++ "k" (FP16 for kFP16).
type Config struct {
	Flags               []string           `json:"flags"`                // BuilderFlag members that are set
	MemoryPools         map[string]int64   `json:"memory_pools"`         // MemoryPoolType member -> limit
	Attrs               map[string]Attr    `json:"attrs"`                // property -> value (Setting.Python)
	TacticSources       []string           `json:"tactic_sources"`       // TacticSource members that are on
	PreviewFeatures     []string           `json:"preview_features"`     // PreviewFeature members that are on
	ComputeCapabilities []string           `json:"compute_capabilities"` // TensorRT-RTX: ComputeCapability members
	Profiles            []map[string]Shape `json:"profiles"`             // optimization profiles, input -> shapes
}

// Attr is one property's value: a number, or an enum member sent as
// {"name": "LAYER_NAMES_ONLY", "value": 0} (or its name alone). A value
// of any other shape (a string, a list) is kept as neither: properties no
// row reads may hold anything.
type Attr struct {
	Name   string
	Number int64
	IsEnum bool
}

func (a *Attr) UnmarshalJSON(data []byte) error {
	var n int64
	if json.Unmarshal(data, &n) == nil {
		a.Number = n
		return nil
	}
	var member struct {
		Name  *string `json:"name"`
		Value int64   `json:"value"`
	}
	if json.Unmarshal(data, &member) == nil && member.Name != nil {
		a.Name, a.Number, a.IsEnum = *member.Name, member.Value, true
		return nil
	}
	var name string
	if json.Unmarshal(data, &name) == nil {
		a.Name, a.IsEnum = name, true
	}
	return nil
}

// FromConfig is what a builder script's config sets, under the matrix's
// keys and in the shapes a matrix build's settings have, so every view
// shows both alike. A setting at its documented default is left out, as a
// matrix build that does not write it; what the table has no row for is
// left out too.
func FromConfig(c Config) map[string]any {
	out := map[string]any{}
	flags := map[string]bool{}
	for _, f := range c.Flags {
		flags["k"+f] = true
	}
	for _, row := range table {
		if v, ok := row.fromConfig(c, flags); ok && !isDefault(row, v) {
			out[row.Key] = v
		}
	}
	return out
}

func isDefault(row Setting, v any) bool {
	return row.Default != nil && row.Default == v
}

// fromConfig is one row's value in c; ok is false when c does not say.
func (row Setting) fromConfig(c Config, flags map[string]bool) (any, bool) {
	switch {
	case row.AliasOf != "":
		return nil, false
	case row.Python != "":
		return row.fromAttr(c.Attrs)
	case row.Kind == Bool && row.Flag != "":
		return flags[row.Flag], true
	case row.EnumType == "BuilderFlag" && row.Kind == Set:
		return row.valuesOn(func(v Value) bool { return flags[v.Enum] })
	case row.EnumType == "BuilderFlag" && row.Kind == Enum:
		for _, v := range row.Values {
			if v.Enum != "" && flags[v.Enum] {
				return v.Name, true
			}
		}
		return row.Default, row.Default != nil
	case row.Kind == Pools && c.MemoryPools != nil:
		pools := map[string]int64{}
		for _, v := range row.Values {
			if n, ok := c.MemoryPools[strings.TrimPrefix(v.Enum, "k")]; ok {
				pools[v.Name] = n
			}
		}
		return pools, len(pools) > 0
	case row.EnumType == "TacticSource" && c.TacticSources != nil:
		return row.toggles(c.TacticSources), true
	case row.EnumType == "PreviewFeature" && c.PreviewFeatures != nil:
		return row.toggles(c.PreviewFeatures), true
	case row.EnumType == "ComputeCapability" && len(c.ComputeCapabilities) > 0:
		return row.valuesOn(func(v Value) bool { return slices.Contains(c.ComputeCapabilities, strings.TrimPrefix(v.Enum, "k")) })
	case row.Kind == Shapes && len(c.Profiles) == 1:
		return c.Profiles[0], true
	case row.Kind == Profiles && len(c.Profiles) > 1:
		return c.Profiles, true
	}
	return nil, false
}

// fromAttr reads a property: a number for Int and Size rows (an enum's
// value, for tiling_optimization_level), a member for Enum rows. The
// unset values TensorRT reports (-1 for max_num_tactics and
// max_aux_streams) are left out.
func (row Setting) fromAttr(attrs map[string]Attr) (any, bool) {
	a, ok := attrs[row.Python]
	if !ok {
		return nil, false
	}
	switch row.Kind {
	case Int:
		if a.Number < row.Min || a.Number > row.Max {
			return nil, false
		}
		return int(a.Number), true
	case Size:
		return a.Number, a.Number > 0
	case Enum:
		for _, v := range row.Values {
			if v.Enum == "k"+a.Name {
				return v.Name, true
			}
		}
	}
	return nil, false
}

// valuesOn lists the values whose enumerator is on, in the table's order;
// ok is false for none.
func (row Setting) valuesOn(on func(Value) bool) (any, bool) {
	var names []string
	for _, v := range row.Values {
		if v.Enum != "" && !v.Implied && on(v) {
			names = append(names, v.Name)
		}
	}
	return names, len(names) > 0
}

// toggles writes which of a Toggles row's values are on (+name), as a
// matrix build writes them. Only those on: which are off depends on what
// the library has, which differs by product and version.
func (row Setting) toggles(on []string) []string {
	out := []string{}
	for _, v := range row.Values {
		if v.Enum != "" && slices.Contains(on, strings.TrimPrefix(v.Enum, "k")) {
			out = append(out, "+"+v.Name)
		}
	}
	return out
}
