// Package settings is the one table of builder settings: every key a build
// may give the builder (opt-level, precision, memory-pools, ...), with what
// it allows, which TensorRT flavours and 10.x minor versions have it, its
// documented default, its trtexec flags and the TensorRT enumerators its
// values stand for. Everything that handles a setting reads this table:
// internal/matrix (validation, trtexec lines both ways, the JSON Schema),
// internal/cache (defaults and files in keys), internal/report (how the
// summary shows a value), and the C++ backends, whose decoder, value lists,
// enum lookups, flavour checks and version gates are generated from it, as
// is the matrix file's JSON Schema. go generate ./internal/settings writes
// native/backends/settings_table.h and settings_enums.h, with
// backend_table.h from the backend registry (internal/backend); go
// generate ./internal/matrix writes internal/matrix/schema.json; tests fail
// when any of them is stale.
package settings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
)

// Kind is how a setting is written in a matrix file, and the Go type its
// value decodes to (the JSON-ready form a build, a plan, a report and the
// backend request carry).
type Kind int

const (
	Bool       Kind = iota // true or false: bool
	Enum                   // one of Values: string
	Int                    // an integer from Min to Max: int
	Size                   // a byte size like 4MiB: int64
	File                   // an existing file: string
	Files                  // one existing file or a list, kept in order (plugins load in it): []string
	OutputFile             // a file trt-action writes: string
	Set                    // one of Values or a list of them, a set: []string, no repeats, in the order of Values
	Toggles                // "+a,-b" or [+a, -b], names from Values: []string, each name signed, as written
	Pools                  // {name from Values: size}: map[string]int64
	LayerTypes             // {layer name or glob: one of Values}, in the order written: []LayerType
	Object                 // a mapping of Fields (dla: {core, gpu-fallback}): DLA
	Shapes                 // {input: {min, opt, max}}: map[string]Shape
	Profiles               // a list of Shapes, in order: []map[string]Shape
)

// Setting is one row of the table.
type Setting struct {
	Key  string
	Kind Kind
	Doc  string // what it does, one sentence (the JSON Schema's description)

	Values   []Value   // what Enum, Set, Toggles, Pools and LayerTypes allow
	Min, Max int64     // Int
	Fields   []Setting // an Object's parts, each of a scalar kind
	Required bool      // a field that must be given

	// Flavours are the shim flavours (internal/backend) that have the
	// setting; nil is every flavour. Why says why the others lack it.
	Flavours []string
	Why      string
	// Since is the TensorRT 10.x minor whose headers and library have the
	// setting's call (0: every 10.x); TensorRT 11 and TensorRT-RTX have all.
	Since int

	// Default is the value the library documents as its default on every
	// backend that has the key (NvInfer.h); nil when none is documented or
	// it differs by backend or version. A setting written with it builds the
	// same engine as one left out (engine cache keys rely on this).
	Default any

	// Fixed settings have a field of their own in a build and in the
	// backend request (precision, shapes, targets, timing-cache); the rest
	// travel in the request's settings object under their key.
	Fixed bool
	// AliasOf is the setting and part this key is another way to write
	// ("memory-pools.workspace"): it is never a setting of its own.
	AliasOf string
	// ItemOf is the list setting this key is one item of, written alone:
	// shapes is profiles: [shapes]. A build writes one or the other; a
	// list of one item is this key wherever a build's settings are shown
	// (plan --json, the report, the engine cache key), and the backends
	// get the list.
	ItemOf string
	// Accelerator: it makes builds faster and changes no engine, so engine
	// cache keys leave it out (the timing cache).
	Accelerator bool

	// Flag is, for a Bool, the TensorRT BuilderFlag it sets when true and
	// clears when false (an enumerator of nvinfer1::BuilderFlag).
	Flag string
	// EnumType is the TensorRT enum its Values' Enum name enumerators of.
	EnumType string
	// Python is the IBuilderConfig property of TensorRT's Python API that
	// holds the setting (builder_optimization_level), for the settings
	// the hook reads from a builder script's config (FromConfig); "" for
	// a setting read some other way (flags, pools, profiles) or not at all.
	Python string

	Trtexec []Flag // its trtexec flags, the first of a kind being the one plan --trtexec writes

	valueNames []string // Values' names, worked out once for each row of the table (ValueNames)
}

// Value is one value a setting allows.
type Value struct {
	Name string
	// Trtexec is how trtexec's flag spells it; "" = Name.
	Trtexec string
	// Aliases are more spellings trtexec reads, each with the warning a
	// line using it gets ("" = none).
	Aliases []Alias
	// Enum is the TensorRT enumerator it stands for, an enumerator of the
	// setting's EnumType; "" = it sets nothing (a documented default).
	Enum string
	// Flavours restrict the value further; nil = the setting's. Why says
	// why the others lack it.
	Flavours []string
	Why      string
	Since    int // the 10.x minor that added it; 0: every 10.x
	// Implied: it asks for nothing beyond the library's defaults
	// (precision fp32 sets no flag; TF32 is on by default), so a trtexec
	// line needs no flag for it and an engine cache key leaves it out.
	Implied bool
	// Implies are the values it stands for (precision best: fp16, int8 and
	// bf16): a requirement of one of them is met by it, and the backends
	// apply them in its place.
	Implies []string
}

// Alias is another spelling of a value that trtexec reads.
type Alias struct {
	Spelling string
	// Deprecated: trtexec warns that the spelling is deprecated, and so
	// does a line that uses it.
	Deprecated bool
}

// LayerType is one entry of layer-precisions or layer-output-types.
type LayerType struct {
	Layer string `json:"layer"` // a layer name, or a glob: see IsLayerGlob
	Type  string `json:"type"`
}

// IsLayerGlob reports whether a layer-precisions (or layer-output-types)
// pattern is a glob rather than a layer's exact name: it holds a *, which
// matches any run of characters, / included. ? and [ are characters of a
// name, as in trtexec (samples/common/sampleUtils.cpp,
// matchStringWithOneWildcard, in NVIDIA/TensorRT 10.x), which reads one *
// only; more than one * is trt-action's own. native/backends/layer_match.h
// matches with the same syntax.
func IsLayerGlob(pattern string) bool { return strings.Contains(pattern, "*") }

// DLA runs layers on a Jetson deep-learning accelerator.
type DLA struct {
	Core        int  `json:"core"`
	GPUFallback bool `json:"gpu-fallback"`
}

// Shape is an optimization-profile entry for one dynamic input.
type Shape struct {
	Min []int64 `json:"min"`
	Opt []int64 `json:"opt"`
	Max []int64 `json:"max"`
}

// All is every row, in the order builds, plans and schemas list them.
func All() []Setting { return table }

// Lookup returns the row of key.
func Lookup(key string) (Setting, bool) {
	i, ok := rowOf[key]
	if !ok {
		return Setting{}, false
	}
	return table[i], true
}

// Keys lists every key a build may write, in table order. The slice is
// the package's: do not change it.
func Keys() []string { return keys }

// keys and rowOf (each key's index in table) are worked out once, as are
// the rows' value names (withValueNames): a matrix asks for them for every
// build.
var keys, rowOf = func() ([]string, map[string]int) {
	ks, rows := make([]string, len(table)), make(map[string]int, len(table))
	for i, s := range table {
		ks[i], rows[s.Key] = s.Key, i
	}
	return ks, rows
}()

// withValueNames gives each row its value names, for ValueNames.
func withValueNames(rows []Setting) []Setting {
	for i := range rows {
		rows[i].valueNames = valueNamesOf(rows[i].Values)
	}
	return rows
}

// ItemKey is the key that writes one item of list setting s alone
// (shapes, for profiles); "" when none does.
func (s Setting) ItemKey() string {
	for _, row := range table {
		if row.ItemOf == s.Key {
			return row.Key
		}
	}
	return ""
}

// Default is key's documented default, if it has one on every backend.
func Default(key string) (any, bool) {
	s, ok := Lookup(key)
	return s.Default, ok && s.Default != nil
}

// IsFile reports whether key names input files, whose content, not name,
// is what decides an engine.
func IsFile(key string) bool {
	s, _ := Lookup(key)
	return s.Kind == File || s.Kind == Files
}

// Value returns the row's value called name.
func (s Setting) Value(name string) (Value, bool) {
	i := slices.IndexFunc(s.Values, func(v Value) bool { return v.Name == name })
	if i < 0 {
		return Value{}, false
	}
	return s.Values[i], true
}

// ValueNames lists the names of s's values, in table order. The slice
// may be the package's: do not change it.
func (s Setting) ValueNames() []string {
	if s.valueNames != nil {
		return s.valueNames
	}
	return valueNamesOf(s.Values)
}

func valueNamesOf(values []Value) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = v.Name
	}
	return out
}

// Includes reports whether list, values of s, asks for value name: holds
// it, or a value that implies it (precision [best] includes int8).
func (s Setting) Includes(list []string, name string) bool {
	for _, item := range list {
		if item == name {
			return true
		}
		if v, ok := s.Value(item); ok && slices.Contains(v.Implies, name) {
			return true
		}
	}
	return false
}

// Field returns the part of an Object setting called name.
func (s Setting) Field(name string) (Setting, bool) {
	i := slices.IndexFunc(s.Fields, func(f Setting) bool { return f.Key == name })
	if i < 0 {
		return Setting{}, false
	}
	return s.Fields[i], true
}

// OnBackend reports whether backend b has the setting: the simulator has
// every setting; a real backend when one of its flavours does.
func (s Setting) OnBackend(b backend.Backend) bool { return onBackend(s.Flavours, b) }

// OnBackend reports whether backend b has the value (within a setting it
// has).
func (v Value) OnBackend(b backend.Backend) bool { return onBackend(v.Flavours, b) }

func onBackend(flavours []string, b backend.Backend) bool {
	return b.Simulated || len(flavours) == 0 || b.HasFlavour(flavours)
}

// Where says which flavours have something restricted to flavours, for
// messages: "only TensorRT 10.x (backend tensorrt)" (has it).
func Where(flavours []string) string {
	var parts []string
	for _, b := range backend.All() {
		var products []string
		for _, f := range b.Flavours {
			if slices.Contains(flavours, f.ID) {
				products = append(products, f.Product)
			}
		}
		switch {
		case len(products) == 0:
		case len(products) == len(b.Flavours):
			parts = append(parts, "backend "+b.Name)
		default:
			parts = append(parts, joinAnd(products)+" (backend "+b.Name+")")
		}
	}
	return "only " + joinAnd(parts)
}

// Describe is the setting's Doc and where it applies: the flavours that
// have it, the 10.x minor it needs, and its values that fewer flavours or
// only later 10.x minors have.
func (s Setting) Describe() string {
	parts := []string{s.Doc}
	if len(s.Flavours) > 0 {
		w := Where(s.Flavours)
		parts = append(parts, strings.ToUpper(w[:1])+w[1:]+" has it.")
	}
	if s.Since > 0 {
		parts = append(parts, fmt.Sprintf("TensorRT 10 needs 10.%d or later.", s.Since))
	}
	var notes []string
	for _, v := range s.Values {
		var where []string
		if len(v.Flavours) > 0 {
			where = append(where, products(v.Flavours)+" only")
		}
		if v.Since > 0 {
			where = append(where, fmt.Sprintf("TensorRT 10.%d or later", v.Since))
		}
		if len(where) > 0 {
			notes = append(notes, v.Name+": "+strings.Join(where, ", "))
		}
	}
	if len(notes) > 0 {
		parts = append(parts, "Not everywhere: "+strings.Join(notes, "; ")+".")
	}
	return strings.Join(parts, " ")
}

// products names flavours: "TensorRT 10.x", "TensorRT 10.x and TensorRT 11.x".
func products(flavours []string) string {
	var names []string
	for _, f := range backend.Flavours() {
		if slices.Contains(flavours, f.ID) {
			names = append(names, f.Product)
		}
	}
	return joinAnd(names)
}

func joinAnd(list []string) string {
	switch len(list) {
	case 0:
		return "none"
	case 1:
		return list[0]
	}
	out := list[0]
	for _, s := range list[1 : len(list)-1] {
		out += ", " + s
	}
	return out + " and " + list[len(list)-1]
}
