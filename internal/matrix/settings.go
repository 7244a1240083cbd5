package matrix

import (
	"path"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"

	"go.yaml.in/yaml/v3"
)

// Setting is one builder setting a build asked for, under its matrix key.
// Value is what the key's kind decodes to, in JSON-ready form: bool, string,
// int, int64, []string, map[string]string, map[string]int64 or DLA. The
// same key names travel to the backends (native.Request.Settings) and into
// the report, so a setting has one name everywhere.
type Setting struct {
	Key   string
	Value any
	Pos   Pos // where the key was written
}

// Settings are a build's builder settings, in the order of settingSpecs.
type Settings []Setting

// get returns the value of key, if set.
func (s Settings) get(key string) (any, bool) {
	for _, x := range s {
		if x.Key == key {
			return x.Value, true
		}
	}
	return nil, false
}

// Map is the settings keyed by name, for JSON.
func (s Settings) Map() map[string]any {
	if len(s) == 0 {
		return nil
	}
	m := make(map[string]any, len(s))
	for _, x := range s {
		m[x.Key] = x.Value
	}
	return m
}

// DLA runs layers on a Jetson deep-learning accelerator.
type DLA struct {
	Core        int  `json:"core"`
	GPUFallback bool `json:"gpu-fallback"`
}

type settingKind int

const (
	kindBool    settingKind = iota
	kindEnum                // one of values
	kindInt                 // lo..hi
	kindSize                // a byte size like 1GiB
	kindFile                // an existing file
	kindFiles               // a list of existing files
	kindTypeMap             // layer name or glob -> one of layerTypes
	kindToggles             // "+a,-b" or [+a, -b], names from values
	kindSizeMap             // name from values -> byte size
	kindDLA                 // {core: N, gpu-fallback: bool}
	kindNames               // a word or a list of words from values
)

// Backend names as a setting lists them.
const (
	backendTRT = backend.TensorRT
	backendRTX = backend.TensorRTRTX
)

// settingSpec describes one builder-setting key.
type settingSpec struct {
	key    string
	kind   settingKind
	values []string // enum values, toggle names, size-map keys
	lo, hi int      // kindInt
	// backends that have the key; the simulator accepts every key.
	backends []string
	// only is a value's restriction to one backend: value -> backend
	// (tactic-sources cublas only exists in TensorRT 10).
	only map[string]string
	// def is the value the library documents as its default (NvInfer.h),
	// for every backend that has the key; nil where none is documented or
	// it differs by backend or version. A setting written with it builds
	// the same engine as one left out (internal/cache keys rely on this).
	def any
}

// Values the builder settings allow.
var (
	precisionConstraints  = []string{"none", "prefer", "obey"}
	layerTypes            = []string{"fp32", "fp16", "bf16", "int8", "int32", "int64", "fp8", "int4", "uint8", "bool"}
	hardwareCompatibility = []string{"none", "ampere-plus", "same-compute-capability"}
	refitModes            = []string{"none", "refit", "identical", "individual"}
	runtimePlatforms      = []string{"same-as-build", "windows-amd64"}
	tacticSources         = []string{"cublas", "cublas-lt", "cudnn", "edge-mask-convolutions", "jit-convolutions"}
	sparsityModes         = []string{"disable", "enable"}
	memoryPools           = []string{"workspace", "tactic-shared", "dla-sram", "dla-local", "dla-global"}
	profilingVerbosities  = []string{"none", "layer-names-only", "detailed"}
	previewFeatures       = []string{"profile-sharing-0806", "aliased-plugin-io-10-03", "runtime-activation-resize-10-10", "multidevice-runtime-10-16"}
	// builderFlags are the builder flags no other key sets.
	builderFlags = []string{"debug", "disable-timing-cache", "error-on-timing-cache-miss", "disable-compilation-cache",
		"strict-nans", "monitor-memory", "editable-timing-cache", "distributive-independence", "require-user-allocation"}
	bothBackends           = []string{backendTRT, backendRTX}
	datacenterOnly         = []string{backendTRT}
	datacenterOnlyFeatures = map[string]string{"profile-sharing-0806": backendTRT, "multidevice-runtime-10-16": backendTRT}
)

// settingSpecs is every builder-setting key besides workspace, opt-level,
// tiling-optimization-level, precision, shapes, targets and timing-cache,
// which build.go reads. Which TensorRT 10.x minor a key needs is checked by
// the backend once the library is loaded (native/backends/version_gate.h).
var settingSpecs = []settingSpec{
	{key: "strongly-typed", kind: kindBool, backends: bothBackends},
	{key: "plugins", kind: kindFiles, backends: bothBackends},
	{key: "plugins-serialize", kind: kindFiles, backends: bothBackends},
	{key: "precision-constraints", kind: kindEnum, values: precisionConstraints, backends: datacenterOnly, def: "none"},
	{key: "layer-precisions", kind: kindTypeMap, values: layerTypes, backends: datacenterOnly},
	{key: "layer-output-types", kind: kindTypeMap, values: layerTypes, backends: datacenterOnly},
	{key: "int8-calibration-cache", kind: kindFile, backends: datacenterOnly},
	{key: "tf32", kind: kindBool, backends: bothBackends, def: true},
	{key: "hardware-compatibility", kind: kindEnum, values: hardwareCompatibility, backends: bothBackends, def: "none"},
	{key: "version-compatible", kind: kindBool, backends: bothBackends, def: false},
	{key: "exclude-lean-runtime", kind: kindBool, backends: bothBackends, def: false},
	{key: "refit", kind: kindEnum, values: refitModes, backends: bothBackends, def: "none"},
	{key: "strip-weights", kind: kindBool, backends: bothBackends, def: false},
	{key: "weight-streaming", kind: kindBool, backends: bothBackends, def: false},
	{key: "runtime-platform", kind: kindEnum, values: runtimePlatforms, backends: bothBackends, def: "same-as-build"},
	{key: "tactic-sources", kind: kindToggles, values: tacticSources, backends: bothBackends,
		only: map[string]string{"cublas": backendTRT, "cublas-lt": backendTRT, "cudnn": backendTRT}},
	{key: "max-tactics", kind: kindInt, lo: 1, hi: 1 << 30, backends: bothBackends},
	{key: "sparsity", kind: kindEnum, values: sparsityModes, backends: bothBackends, def: "disable"},
	{key: "max-aux-streams", kind: kindInt, lo: 0, hi: 64, backends: bothBackends},
	{key: "l2-limit-for-tiling", kind: kindSize, backends: bothBackends},
	{key: "memory-pools", kind: kindSizeMap, values: memoryPools, backends: bothBackends,
		only: map[string]string{"dla-sram": backendTRT, "dla-local": backendTRT, "dla-global": backendTRT}},
	{key: "profiling-verbosity", kind: kindEnum, values: profilingVerbosities, backends: bothBackends, def: "layer-names-only"},
	{key: "preview-features", kind: kindToggles, values: previewFeatures, backends: bothBackends, only: datacenterOnlyFeatures},
	{key: "dla", kind: kindDLA, backends: datacenterOnly},
	{key: "builder-flags", kind: kindNames, values: builderFlags, backends: bothBackends,
		only: map[string]string{"require-user-allocation": backendRTX}},
}

// fixedDefaults are the documented defaults of the keys build.go reads
// (NvInfer.h: builder optimization level 3, tiling level kNONE).
var fixedDefaults = map[string]any{"opt-level": 3, "tiling-optimization-level": 0}

// SettingDefault is the library's documented default of a builder-setting
// key (as BuilderSettings names them), if it has one for every backend: a
// setting written with that value builds the same engine as one left out.
func SettingDefault(key string) (any, bool) {
	if v, ok := fixedDefaults[key]; ok {
		return v, true
	}
	for _, s := range settingSpecs {
		if s.key == key {
			return s.def, s.def != nil
		}
	}
	return nil, false
}

// IsFileSetting reports whether a builder-setting key names files (a
// string, or a list of them), whose content, not name, is what counts.
func IsFileSetting(key string) bool {
	for _, s := range settingSpecs {
		if s.key == key {
			return s.kind == kindFile || s.kind == kindFiles
		}
	}
	return false
}

// settingKeys lists the keys above, for buildKeys.
func settingKeys() []string {
	out := make([]string, len(settingSpecs))
	for i, s := range settingSpecs {
		out[i] = s.key
	}
	return out
}

// backendNote says which backends have something, for messages.
func backendNote(backends []string) string {
	if slices.Equal(backends, datacenterOnly) {
		return "only backend tensorrt (datacenter TensorRT) has it"
	}
	return "backends with it: " + choices(backends)
}

// settings reads every builder-setting key present in fs, then the
// conflicts between them.
func (d *decoder) settings(fs fieldSet, b *Build) {
	for _, spec := range settingSpecs {
		p, ok := fs.get(spec.key)
		if !ok {
			continue
		}
		at := d.w.pos(p.key)
		if b.Backend != "" && !backend.Of(b.Backend).Simulated && !slices.Contains(spec.backends, b.Backend) {
			d.w.errs.add(at, "%s: backend %s has no such setting; %s", spec.key, b.Backend, backendNote(spec.backends))
			continue
		}
		if v, ok := d.settingValue(spec, p.val, b.Backend); ok {
			b.Settings = append(b.Settings, Setting{Key: spec.key, Value: v, Pos: at})
		}
	}
	d.checkConflicts(b, fs)
}

func (d *decoder) settingValue(spec settingSpec, n *yaml.Node, backendName string) (any, bool) {
	switch spec.kind {
	case kindBool:
		v, ok := d.boolean(n, spec.key)
		if ok && spec.key == "strongly-typed" && !v && backendName == backendRTX {
			d.w.errs.add(d.w.pos(n), "strongly-typed: TensorRT-RTX networks are always strongly typed, so it cannot be turned off; "+
				"only backend tensorrt with TensorRT 10.x builds weakly typed networks")
			return nil, false
		}
		return v, ok
	case kindEnum:
		return d.enum(n, spec.key, spec.values)
	case kindInt:
		return d.intIn(n, spec.key, spec.lo, spec.hi)
	case kindSize:
		return d.byteSize(n, spec.key)
	case kindFile:
		return d.existingPath(n, spec.key)
	case kindFiles:
		return d.files(n, spec.key)
	case kindTypeMap:
		return d.typeMap(n, spec.key, spec.values)
	case kindToggles:
		return d.toggles(n, spec, backendName)
	case kindSizeMap:
		return d.sizeMap(n, spec, backendName)
	case kindDLA:
		return d.dla(n)
	case kindNames:
		return d.names(n, spec, backendName)
	}
	return nil, false
}

// boolean reads true or false.
func (d *decoder) boolean(n *yaml.Node, what string) (bool, bool) {
	s, ok := d.text(n, what, "true or false")
	if !ok {
		return false, false
	}
	switch strings.TrimSpace(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	d.w.errs.add(d.w.pos(n), "%s: expected true or false, got %q", what, s)
	return false, false
}

// files reads one existing file or a list of them.
func (d *decoder) files(n *yaml.Node, what string) ([]string, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		p, ok := d.existingPath(n, what)
		return []string{p}, ok
	}
	items, ok := d.w.items(n, what, "a file or a list of files")
	if ok && len(items) == 0 {
		d.w.errs.add(d.w.pos(n), "%s: the list is empty; name at least one file or remove the key", what)
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		p, good := d.existingPath(it, what)
		ok = ok && good
		out = append(out, p)
	}
	return out, ok
}

// typeMap reads {layer name or glob: type}.
func (d *decoder) typeMap(n *yaml.Node, what string, types []string) (map[string]string, bool) {
	ps := d.w.pairs(n, what)
	if len(ps) == 0 {
		d.w.errs.add(d.w.pos(n), "%s: expected a mapping from a layer name or glob to a type (%s)", what, choices(types))
		return nil, false
	}
	out := make(map[string]string, len(ps))
	ok := true
	for _, p := range ps {
		// Layer names often hold "/" (ONNX names like /conv1/Conv); only
		// the glob syntax is checked here.
		if _, err := path.Match(p.key.Value, ""); err != nil || strings.TrimSpace(p.key.Value) == "" {
			d.w.errs.add(d.w.pos(p.key), "%s: %q is not a layer name or glob", what, p.key.Value)
			ok = false
			continue
		}
		t, good := d.enum(p.val, what+"."+p.key.Value, types)
		ok = ok && good
		out[p.key.Value] = t
	}
	return out, ok
}

// toggles reads "+a,-b" or a list [+a, -b]; a bare name means +name.
// The result is each name with its sign, in the order written.
func (d *decoder) toggles(n *yaml.Node, spec settingSpec, backendName string) ([]string, bool) {
	n = resolve(n)
	var words []*yaml.Node
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		s, ok := d.text(n, spec.key, "a list like +name,-name")
		if !ok {
			return nil, false
		}
		for _, w := range strings.Split(s, ",") {
			words = append(words, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(w), Line: n.Line, Column: n.Column})
		}
	} else {
		var ok bool
		if words, ok = d.w.items(n, spec.key, "a list like [+name, -name]"); !ok {
			return nil, false
		}
	}
	out := make([]string, 0, len(words))
	ok := true
	for _, w := range words {
		s, good := d.text(w, spec.key, "+name or -name")
		if !good {
			ok = false
			continue
		}
		sign, name := "+", s
		if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
			sign, name = s[:1], s[1:]
		}
		if !slices.Contains(spec.values, name) {
			msg := "%s: unknown name %q"
			if c := closest(name, spec.values); c != "" {
				msg += ` (did you mean "` + c + `"?)`
			}
			d.w.errs.add(d.w.pos(w), msg+"; allowed: %s, each with + (on) or - (off)", spec.key, name, choices(spec.values))
			ok = false
			continue
		}
		if need, restricted := spec.only[name]; restricted && !backend.Of(backendName).Simulated && backendName != need {
			d.w.errs.add(d.w.pos(w), "%s: %s does not exist in backend %s; only backend %s has it", spec.key, name, backendName, need)
			ok = false
			continue
		}
		out = append(out, sign+name)
	}
	return out, ok
}

// sizeMap reads {pool: size}.
func (d *decoder) sizeMap(n *yaml.Node, spec settingSpec, backendName string) (map[string]int64, bool) {
	fs := d.w.fields(n, spec.key, spec.values)
	out := map[string]int64{}
	ok := true
	for name, p := range fs.all() {
		if need, restricted := spec.only[name]; restricted && !backend.Of(backendName).Simulated && backendName != need {
			d.w.errs.add(d.w.pos(p.key), "%s.%s: backend %s has no such pool; only backend %s has it", spec.key, name, backendName, need)
			ok = false
			continue
		}
		v, good := d.byteSize(p.val, spec.key+"."+name)
		ok = ok && good
		out[name] = v
	}
	if len(out) == 0 && ok {
		d.w.errs.add(d.w.pos(n), "%s: expected a mapping from a pool (%s) to a size like 1GiB", spec.key, choices(spec.values))
		return nil, false
	}
	return out, ok
}

// names reads one word or a list of words from spec.values.
func (d *decoder) names(n *yaml.Node, spec settingSpec, backendName string) ([]string, bool) {
	words, ok := d.enumList(n, spec.key, spec.values)
	for _, w := range words {
		if need, restricted := spec.only[w]; restricted && !backend.Of(backendName).Simulated && backendName != need {
			d.w.errs.add(d.w.pos(n), "%s: %s does not exist in backend %s; only backend %s has it", spec.key, w, backendName, need)
			ok = false
		}
	}
	return words, ok
}

var dlaKeys = []string{"core", "gpu-fallback"}

// dla reads {core: N, gpu-fallback: bool}; core is required.
func (d *decoder) dla(n *yaml.Node) (DLA, bool) {
	fs := d.w.fields(n, "dla", dlaKeys)
	var v DLA
	ok := true
	if p, has := fs.get("core"); has {
		v.Core, ok = d.intIn(p.val, "dla.core", 0, 15)
	} else {
		d.w.errs.add(d.w.pos(n), "dla: core is required (the DLA core to build for, like core: 0)")
		ok = false
	}
	if p, has := fs.get("gpu-fallback"); has {
		var good bool
		v.GPUFallback, good = d.boolean(p.val, "dla.gpu-fallback")
		ok = ok && good
	}
	return v, ok
}

// conflict is a pair of settings that cannot go together, or a setting
// that needs another.
type conflict struct {
	a, b   string
	clash  func(a, b any) bool // a and b both set
	reason string
}

func isTrue(v any) bool { b, ok := v.(bool); return ok && b }

var settingConflicts = []conflict{
	{"strongly-typed", "precision", func(a, b any) bool {
		return isTrue(a) && slices.ContainsFunc(b.([]string), func(p string) bool { return p != "tf32" })
	}, "a strongly typed network takes its types from the model, so precision may only be tf32; remove one of them"},
	{"strongly-typed", "precision-constraints", func(a, _ any) bool { return isTrue(a) },
		"precision constraints apply to weakly typed networks only; a strongly typed network takes its types from the model"},
	{"strongly-typed", "layer-precisions", func(a, _ any) bool { return isTrue(a) },
		"layer precisions apply to weakly typed networks only; cast in the model instead"},
	{"strongly-typed", "layer-output-types", func(a, _ any) bool { return isTrue(a) },
		"layer output types apply to weakly typed networks only; cast in the model instead"},
	{"strongly-typed", "int8-calibration-cache", func(a, _ any) bool { return isTrue(a) },
		"calibration is for weakly typed int8 networks; a strongly typed network is quantized in the model (Q/DQ)"},
	{"refit", "strip-weights", func(a, b any) bool { return a == "none" && isTrue(b) },
		"a plan without weights must be refitted; use refit: identical (or refit) or drop strip-weights"},
	{"tf32", "precision", func(a, b any) bool { return a == false && slices.Contains(b.([]string), "tf32") },
		"tf32: false turns off what precision: tf32 turns on; remove one of them"},
	{"memory-pools", "workspace", func(a, _ any) bool { _, has := a.(map[string]int64)["workspace"]; return has },
		"memory-pools.workspace and workspace set the same pool; keep one"},
}

// settingRequirements are settings that need another one.
var settingRequirements = []struct {
	key, needs string
	applies    func(v any) bool
	reason     string
}{
	{"exclude-lean-runtime", "version-compatible", isTrue, "exclude-lean-runtime: true needs version-compatible: true (the lean runtime is only embedded in version-compatible plans)"},
	{"int8-calibration-cache", "precision", func(any) bool { return true }, "int8-calibration-cache needs precision to include int8"},
}

// checkConflicts reports each conflicting pair at the key written later.
func (d *decoder) checkConflicts(b *Build, fs fieldSet) {
	if len(b.Settings) == 0 {
		return // every conflict involves a setting; most builds have none
	}
	get := func(key string) (any, Pos, bool) {
		if v, ok := b.Settings.get(key); ok {
			p, _ := fs.get(key)
			return v, d.w.pos(p.key), true
		}
		if key == "precision" && b.Precision != nil {
			p, _ := fs.get(key)
			return b.Precision, d.w.pos(p.key), true
		}
		if key == "workspace" && b.WorkspaceBytes > 0 {
			p, _ := fs.get(key)
			return b.WorkspaceBytes, d.w.pos(p.key), true
		}
		return nil, Pos{}, false
	}
	for _, c := range settingConflicts {
		va, pa, okA := get(c.a)
		vb, pb, okB := get(c.b)
		if !okA || !okB || !c.clash(va, vb) {
			continue
		}
		later, first, firstPos := pb, c.a, pa
		if pb.before(pa) {
			later, first, firstPos = pa, c.b, pb
		}
		d.w.errs.add(later, "%s and %s (at %s) conflict: %s", laterKey(c, first), first, firstPos, c.reason)
	}
	for _, r := range settingRequirements {
		v, at, ok := get(r.key)
		if !ok || !r.applies(v) {
			continue
		}
		other, _, has := get(r.needs)
		switch {
		case r.needs == "precision" && has && slices.Contains(other.([]string), "int8"):
		case r.needs != "precision" && has && isTrue(other):
		default:
			d.w.errs.add(at, "%s", r.reason)
		}
	}
}

func laterKey(c conflict, first string) string {
	if first == c.a {
		return c.b
	}
	return c.a
}

// BuilderSettings is every builder setting of b under its matrix key, the
// fixed keys (workspace, opt-level, ...) and Settings alike: what the report
// shows as applied and what `plan --trtexec` writes out.
func (b Build) BuilderSettings() map[string]any {
	m := b.Settings.Map()
	if m == nil {
		m = map[string]any{}
	}
	if b.WorkspaceBytes > 0 {
		m["workspace"] = b.WorkspaceBytes
	}
	if b.OptLevel != nil {
		m["opt-level"] = *b.OptLevel
	}
	if b.TilingLevel != nil {
		m["tiling-optimization-level"] = *b.TilingLevel
	}
	if len(b.Precision) > 0 {
		m["precision"] = b.Precision
	}
	if len(b.Targets) > 0 {
		m["targets"] = b.Targets
	}
	if b.TimingCache != "" {
		m["timing-cache"] = b.TimingCache
	}
	if len(b.Shapes) > 0 {
		shapes := make(map[string]planShape, len(b.Shapes))
		for name, s := range b.Shapes {
			shapes[name] = planShape(s)
		}
		m["shapes"] = shapes
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
