package matrix

import (
	"slices"
	"strconv"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/settings"

	"go.yaml.in/yaml/v3"
)

// The builder settings (internal/settings holds what each key allows):
// their values in a Build are in settings.Kind's Go types.
type (
	// Shape is an optimization-profile entry for one dynamic input.
	Shape = settings.Shape
	// DLA runs layers on a Jetson deep-learning accelerator.
	DLA = settings.DLA
	// LayerType is one entry of layer-precisions or layer-output-types.
	LayerType = settings.LayerType
)

// Setting is one builder setting a build asked for, under its matrix key.
// Value is in the Go type of the key's settings.Kind. The same key names
// travel to the backends (native.Request.Settings) and into the report,
// so a setting has one name everywhere.
type Setting struct {
	Key   string
	Value any
	Pos   Pos // where the key was written
}

// Settings are a build's builder settings but the fixed ones (precision,
// shapes, targets, timing-cache, which Build has fields for), in table
// order.
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

// because adds why to a message that says what is missing.
func because(why string) string {
	if why == "" {
		return ""
	}
	return " (" + why + ")"
}

// settings reads every builder-setting key present in fs, then the
// conflicts between them. An alias key (workspace) is in its setting's
// place by now (aliases.go).
func (d *decoder) settings(fs fieldSet, b *Build) {
	be := backend.Of(b.Backend)
	for _, row := range settings.All() {
		p, ok := fs.get(row.Key)
		if !ok || row.AliasOf != "" {
			continue
		}
		at := d.w.pos(p.key)
		if b.Backend != "" && !row.OnBackend(be) {
			d.w.errs.add(at, "%s: backend %s has no such setting; %s has it%s", row.Key, b.Backend, settings.Where(row.Flavours), because(row.Why))
			continue
		}
		v, ok := d.settingValue(row, p.val, be)
		switch {
		case !ok:
		case row.Fixed:
			setFixed(b, row.Key, v, at)
		default:
			b.Settings = append(b.Settings, Setting{Key: row.Key, Value: v, Pos: at})
		}
	}
	d.checkOneForm(fs)
	d.checkConflicts(b, fs)
}

// checkOneForm reports a mapping that writes a list setting and its
// one-item key both (profiles and shapes), at the one written later:
// nothing says which was meant. Across a build's sources the later one
// replaces the other (mergeBuild), so both can only meet in one mapping.
func (d *decoder) checkOneForm(fs fieldSet) {
	for _, row := range settings.All() {
		if row.ItemOf == "" {
			continue
		}
		item, hasItem := fs.get(row.Key)
		list, hasList := fs.get(row.ItemOf)
		if !hasItem || !hasList {
			continue
		}
		later, other, otherPos := item, row.ItemOf, d.w.pos(list.key)
		if d.w.pos(item.key).before(d.w.pos(list.key)) {
			later, other, otherPos = list, row.Key, d.w.pos(item.key)
		}
		d.w.errs.add(d.w.pos(later.key), "%s and %s (at %s) cannot both be written: %s is one item of %s; keep one",
			later.key.Value, other, otherPos, row.Key, row.ItemOf)
	}
}

// setFixed puts a fixed setting's value, written at at, in its field of b
// (Build.builderSetting reads it from there).
func setFixed(b *Build, key string, v any, at Pos) {
	switch key {
	case "precision":
		b.Precision = v.([]string)
	case "shapes":
		b.Profiles = []map[string]Shape{v.(map[string]Shape)}
	case "profiles":
		b.Profiles = v.([]map[string]Shape)
	case "targets":
		b.Targets = v.([]string)
	case "timing-cache":
		b.TimingCache, b.TimingCachePos = v.(string), at
	default:
		panic("matrix: fixed setting " + key + " has no field in Build")
	}
}

func (d *decoder) settingValue(row settings.Setting, n *yaml.Node, be backend.Backend) (any, bool) {
	switch row.Kind {
	case settings.Bool:
		v, ok := d.boolean(n, row.Key)
		if ok && !d.valueOnBackend(row, n, strconv.FormatBool(v), be) {
			return nil, false
		}
		return v, ok
	case settings.Enum:
		v, ok := d.enum(n, row.Key, row.ValueNames())
		if ok && !d.valueOnBackend(row, n, v, be) {
			return nil, false
		}
		return v, ok
	case settings.Int:
		return d.intIn(n, row.Key, int(row.Min), int(row.Max))
	case settings.Size:
		return d.byteSize(n, row.Key)
	case settings.File:
		return d.existingPath(n, row.Key)
	case settings.Files:
		return d.files(n, row.Key)
	case settings.OutputFile:
		return d.outputPath(n, row.Key)
	case settings.Set:
		return d.set(n, row, be)
	case settings.Toggles:
		return d.toggles(n, row, be)
	case settings.Pools:
		return d.pools(n, row, be)
	case settings.LayerTypes:
		return d.layerTypes(n, row)
	case settings.Object:
		return d.dla(n, row)
	case settings.Shapes:
		shapes, _ := d.shapes(n, row.Key)
		return shapes, shapes != nil
	case settings.Profiles:
		return d.profiles(n, row.Key)
	}
	return nil, false
}

// valueOnBackend reports, at n, a value the build's backend lacks.
func (d *decoder) valueOnBackend(row settings.Setting, n *yaml.Node, name string, be backend.Backend) bool {
	return d.valuesOnBackend(row, n, []string{name}, be)
}

// valuesOnBackend reports, at n, the values of names the build's backend
// lacks, one message for those that share a reason.
func (d *decoder) valuesOnBackend(row settings.Setting, n *yaml.Node, names []string, be backend.Backend) bool {
	if be.Name == "" {
		return true
	}
	var lacking []string
	var first settings.Value
	for _, name := range names {
		if v, known := row.Value(name); known && !v.OnBackend(be) {
			if lacking != nil && (v.Why != first.Why || !slices.Equal(v.Flavours, first.Flavours)) {
				d.valuesOnBackend(row, n, []string{name}, be)
				continue
			}
			first = v
			lacking = append(lacking, name)
		}
	}
	switch len(lacking) {
	case 0:
		return true
	case 1:
		d.w.errs.add(d.w.pos(n), "%s: %s: backend %s has no such value; %s has it%s",
			row.Key, lacking[0], be.Name, settings.Where(first.Flavours), because(first.Why))
	default:
		d.w.errs.add(d.w.pos(n), "%s: %s: backend %s has none of these values; %s has them%s",
			row.Key, strings.Join(lacking, ", "), be.Name, settings.Where(first.Flavours), because(first.Why))
	}
	return false
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

// set reads one value or a list of them as a set: repeats are dropped and
// the values come in the table's order, so a build, its cache key and the
// backend see the same list however it was written (targets: [sm86, sm86,
// sm89] is [sm86, sm89]).
func (d *decoder) set(n *yaml.Node, row settings.Setting, be backend.Backend) ([]string, bool) {
	words, ok := d.enumList(n, row.Key, row.ValueNames())
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(words))
	for _, name := range row.ValueNames() {
		if slices.Contains(words, name) {
			out = append(out, name)
		}
	}
	return out, d.valuesOnBackend(row, n, out, be)
}

// layerTypes reads {layer name or glob: type}, keeping the order written:
// which pattern decides a layer depends on it (native/backends/layer_match.h).
func (d *decoder) layerTypes(n *yaml.Node, row settings.Setting) ([]LayerType, bool) {
	types := row.ValueNames()
	ps := d.w.pairs(n, row.Key)
	if len(ps) == 0 {
		d.w.errs.add(d.w.pos(n), "%s: expected a mapping from a layer name or glob to a type (%s)", row.Key, choices(types))
		return nil, false
	}
	out := make([]LayerType, 0, len(ps))
	ok := true
	for _, p := range ps {
		// Any text is a layer name or a glob (settings.IsLayerGlob), but
		// blank text, which names no layer.
		if strings.TrimSpace(p.key.Value) == "" {
			d.w.errs.add(d.w.pos(p.key), "%s: %q is not a layer name or glob", row.Key, p.key.Value)
			ok = false
			continue
		}
		t, good := d.enum(p.val, row.Key+"."+p.key.Value, types)
		ok = ok && good
		out = append(out, LayerType{Layer: p.key.Value, Type: t})
	}
	return out, ok
}

// toggles reads "+a,-b" or a list [+a, -b]; a bare name means +name.
// The result is each name with its sign, in the order written.
func (d *decoder) toggles(n *yaml.Node, row settings.Setting, be backend.Backend) ([]string, bool) {
	n = resolve(n)
	var words []*yaml.Node
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		s, ok := d.text(n, row.Key, "a list like +name,-name")
		if !ok {
			return nil, false
		}
		for _, w := range strings.Split(s, ",") {
			words = append(words, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(w), Line: n.Line, Column: n.Column})
		}
	} else {
		var ok bool
		if words, ok = d.w.items(n, row.Key, "a list like [+name, -name]"); !ok {
			return nil, false
		}
	}
	names := row.ValueNames()
	out := make([]string, 0, len(words))
	ok := true
	for _, w := range words {
		s, good := d.text(w, row.Key, "+name or -name")
		if !good {
			ok = false
			continue
		}
		sign, name := "+", s
		if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
			sign, name = s[:1], s[1:]
		}
		if !slices.Contains(names, name) {
			msg := "%s: unknown name %q"
			if c := closest(name, names); c != "" {
				msg += ` (did you mean "` + c + `"?)`
			}
			d.w.errs.add(d.w.pos(w), msg+"; allowed: %s, each with + (on) or - (off)", row.Key, name, choices(names))
			ok = false
			continue
		}
		if !d.valueOnBackend(row, w, name, be) {
			ok = false
			continue
		}
		out = append(out, sign+name)
	}
	return out, ok
}

// pools reads {pool: size}.
func (d *decoder) pools(n *yaml.Node, row settings.Setting, be backend.Backend) (map[string]int64, bool) {
	fs := d.w.fields(n, row.Key, row.ValueNames())
	out := map[string]int64{}
	ok := true
	for name, p := range fs.all() {
		if !d.valueOnBackend(row, p.key, name, be) {
			ok = false
			continue
		}
		v, good := d.byteSize(p.val, d.w.aliasName(p.key, row.Key+"."+name))
		ok = ok && good
		out[name] = v
	}
	if len(out) == 0 && ok {
		d.w.errs.add(d.w.pos(n), "%s: expected a mapping from a pool (%s) to a size like 1GiB", row.Key, choices(row.ValueNames()))
		return nil, false
	}
	return out, ok
}

// dla reads {core: N, gpu-fallback: bool}; its Fields say what each allows.
func (d *decoder) dla(n *yaml.Node, row settings.Setting) (DLA, bool) {
	names := make([]string, len(row.Fields))
	for i, f := range row.Fields {
		names[i] = f.Key
	}
	fs := d.w.fields(n, row.Key, names)
	var v DLA
	ok := true
	core, _ := row.Field("core")
	if p, has := fs.get("core"); has {
		v.Core, ok = d.intIn(p.val, row.Key+".core", int(core.Min), int(core.Max))
	} else {
		d.w.errs.add(d.w.pos(n), "%s: core is required (the DLA core to build for, like core: 0)", row.Key)
		ok = false
	}
	if p, has := fs.get("gpu-fallback"); has {
		var good bool
		v.GPUFallback, good = d.boolean(p.val, row.Key+".gpu-fallback")
		ok = ok && good
	}
	return v, ok
}

// conflict is a pair of settings that cannot go together.
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
}

// settingRequirements are settings that need another one to have a value:
// a Bool to be that value, a Set to include it, directly or through a value
// that implies it (precision best includes int8).
var settingRequirements = []struct {
	key        string
	applies    func(v any) bool
	needs, has string
	reason     string
}{
	{"exclude-lean-runtime", isTrue, "version-compatible", "true", "exclude-lean-runtime: true needs version-compatible: true (the lean runtime is only embedded in version-compatible plans)"},
	{"int8-calibration-cache", func(any) bool { return true }, "precision", "int8", "int8-calibration-cache needs precision to include int8 (or best)"},
}

// hasValue reports whether v, a value of setting key, is or includes has.
func hasValue(key string, v any, has string) bool {
	row, _ := settings.Lookup(key)
	switch v := v.(type) {
	case bool:
		return strconv.FormatBool(v) == has
	case []string:
		return row.Includes(v, has)
	}
	return v == has
}

// checkConflicts reports each conflicting pair at the key written later.
func (d *decoder) checkConflicts(b *Build, fs fieldSet) {
	if len(b.Settings) == 0 {
		return // every conflict involves a setting; most builds have none
	}
	get := func(key string) (any, Pos, bool) {
		v, ok := b.builderSetting(key)
		if !ok {
			return nil, Pos{}, false
		}
		p, _ := fs.get(key)
		return v, d.w.pos(p.key), true
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
		if other, _, has := get(r.needs); !has || !hasValue(r.needs, other, r.has) {
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
// fixed ones (precision, shapes, ...) and Settings alike: what plan --json
// and the report show as applied, what an engine cache key is made of and
// what plan --trtexec writes out.
func (b Build) BuilderSettings() map[string]any {
	m := b.Settings.Map()
	if m == nil {
		m = map[string]any{}
	}
	for _, key := range fixedKeys {
		if v, ok := b.builderSetting(key); ok {
			m[key] = v
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// fixedKeys are the settings with a field of their own in Build.
var fixedKeys = func() []string {
	var keys []string
	for _, row := range settings.All() {
		if row.Fixed {
			keys = append(keys, row.Key)
		}
	}
	return keys
}()

// builderSetting returns the value of builder setting key in b, from its
// field for a fixed one (setFixed puts it there), if set.
func (b Build) builderSetting(key string) (any, bool) {
	switch key {
	case "precision":
		return b.Precision, len(b.Precision) > 0
	case "targets":
		return b.Targets, len(b.Targets) > 0
	case "timing-cache":
		return b.TimingCache, b.TimingCache != ""
	case "shapes": // a list of one profile is shapes, however it was written
		if len(b.Profiles) == 1 {
			return b.Profiles[0], true
		}
		return nil, false
	case "profiles":
		return b.Profiles, len(b.Profiles) > 1
	}
	return b.Settings.get(key)
}
