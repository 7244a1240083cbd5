package matrix

import (
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxCombinations bounds one build's expansion so a typo (or a fuzzer)
// cannot ask for billions of builds.
const maxCombinations = 10000

// kv is one matrix variable of a combination, or of an include/exclude entry.
type kv struct {
	key, val string
	keyNode  *yaml.Node
}

// combo is one matrix combination, in axis order then include order.
type combo []kv

func (c combo) get(key string) (string, bool) {
	for _, x := range c {
		if x.key == key {
			return x.val, true
		}
	}
	return "", false
}

// with returns a copy of c with key set to val (replaced in place if present).
func (c combo) with(x kv) combo {
	out := make(combo, len(c), len(c)+1)
	copy(out, c)
	for i := range out {
		if out[i].key == x.key {
			out[i] = x
			return out
		}
	}
	return append(out, x)
}

func (c combo) asMap() map[string]string {
	if len(c) == 0 {
		return nil
	}
	m := make(map[string]string, len(c))
	for _, x := range c {
		m[x.key] = x.val
	}
	return m
}

type axis struct {
	name    string
	keyNode *yaml.Node
	values  []string
}

// entry is one include or exclude item.
type entry struct {
	node     *yaml.Node
	kvs      []kv
	topLevel bool // from the file's top-level matrix, which every build shares
}

// matrixSpec is a strategy.matrix as written: axes, include, exclude.
type matrixSpec struct {
	axes             []axis
	include, exclude []entry
}

var axisName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// readMatrix reads a matrix mapping; nil when absent or null.
func (w *walker) readMatrix(n *yaml.Node, what string, topLevel bool) *matrixSpec {
	if isNull(n) {
		return nil
	}
	spec := &matrixSpec{}
	for _, p := range w.pairs(n, what) {
		name := p.key.Value
		switch name {
		case "include":
			spec.include = append(spec.include, w.readEntries(p.val, what+".include", topLevel)...)
		case "exclude":
			spec.exclude = append(spec.exclude, w.readEntries(p.val, what+".exclude", topLevel)...)
		default:
			if !axisName.MatchString(name) {
				w.errs.add(w.pos(p.key), "%s: axis name %q must start with a letter or _ and hold only letters, digits, _ and -", what, name)
				continue
			}
			if a, ok := w.readAxis(p, what); ok {
				spec.axes = append(spec.axes, a)
			}
		}
	}
	return spec
}

// readAxis reads one axis; a broken or empty axis is reported and left
// out, so the rest of the build is still checked.
func (w *walker) readAxis(p pair, what string) (axis, bool) {
	a := axis{name: p.key.Value, keyNode: p.key}
	where := what + "." + a.name
	vals, ok := w.items(p.val, where, "a list of values")
	if ok && len(vals) == 0 {
		w.errs.add(w.pos(p.key), "%s: axis has no values; give a list like [a, b]", where)
	}
	for _, v := range vals {
		if s, good := w.matrixValue(v, where); good {
			a.values = append(a.values, s)
		}
	}
	return a, len(a.values) > 0
}

func (w *walker) readEntries(n *yaml.Node, what string, topLevel bool) []entry {
	nodes, _ := w.items(n, what, "a list of mappings")
	out := make([]entry, 0, len(nodes))
	for _, item := range nodes {
		if item.Kind != yaml.MappingNode {
			w.errs.add(w.pos(item), "%s: expected a mapping like {axis: value}, got %s", what, describe(item))
			continue
		}
		e := entry{node: item, topLevel: topLevel}
		for _, p := range w.pairs(item, what) {
			if s, ok := w.matrixValue(p.val, what+"."+p.key.Value); ok {
				e.kvs = append(e.kvs, kv{key: p.key.Value, val: s, keyNode: p.key})
			}
		}
		out = append(out, e)
	}
	return out
}

// matrixValue reads one axis value: matrix values are substituted into
// strings, so only scalars make sense.
func (w *walker) matrixValue(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		w.errs.add(w.pos(n), "%s: expected a string or number, got %s", what, describe(n))
		return "", false
	}
	if strings.Contains(n.Value, "${{") {
		w.errs.add(w.pos(n), "%s: matrix values cannot contain ${{ }} expressions", what)
		return "", false
	}
	return n.Value, true
}

// combine applies a build's own matrix over the top-level one: top-level
// axes first, an axis the build redefines takes the build's values, and
// include/exclude lists are concatenated.
func combine(top, own *matrixSpec) *matrixSpec {
	if top == nil {
		return own
	}
	if own == nil {
		return top
	}
	out := &matrixSpec{}
	redefined := make(map[string]bool, len(own.axes))
	for _, a := range own.axes {
		redefined[a.name] = true
	}
	for _, a := range top.axes {
		if !redefined[a.name] {
			out.axes = append(out.axes, a)
		}
	}
	out.axes = append(out.axes, own.axes...)
	out.include = append(append([]entry{}, top.include...), own.include...)
	out.exclude = append(append([]entry{}, top.exclude...), own.exclude...)
	return out
}

// expand lists the combinations of spec the way a workflow's
// strategy.matrix does: the cartesian product of the axes (first axis
// varying slowest), minus every combination an exclude entry matches
// (partially), then each include entry either extends every original
// combination whose axis values it agrees with, or, matching none, is
// added as a combination of its own. Returns nil on error.
func (w *walker) expand(spec *matrixSpec, at Pos) []combo {
	if spec == nil {
		return []combo{nil}
	}
	total := 1
	for _, a := range spec.axes {
		total *= len(a.values)
		if total > maxCombinations {
			w.errs.add(at, "matrix expands to more than %d combinations", maxCombinations)
			return nil
		}
	}
	if total+len(spec.include) > maxCombinations {
		w.errs.add(at, "matrix expands to more than %d combinations", maxCombinations)
		return nil
	}
	base := product(spec.axes)
	base = w.applyExcludes(base, spec)
	combos := applyIncludes(base, spec)
	if len(combos) == 0 {
		w.errs.add(at, "matrix expands to no builds (every combination is excluded)")
	}
	return combos
}

func product(axes []axis) []combo {
	if len(axes) == 0 {
		// Without axes there is nothing to extend: include entries are the
		// combinations.
		return nil
	}
	combos := []combo{nil}
	for _, a := range axes {
		next := make([]combo, 0, len(combos)*len(a.values))
		for _, c := range combos {
			for _, v := range a.values {
				next = append(next, c.with(kv{key: a.name, val: v, keyNode: a.keyNode}))
			}
		}
		combos = next
	}
	return combos
}

func (w *walker) applyExcludes(base []combo, spec *matrixSpec) []combo {
	names := spec.axisNames()
	var active []entry
	for _, e := range spec.exclude {
		if w.excludeApplies(e, names) {
			active = append(active, e)
		}
	}
	kept := base[:0]
	for _, c := range base {
		if !anyMatch(active, c) {
			kept = append(kept, c)
		}
	}
	return kept
}

// excludeApplies reports whether every key of e is an axis of this build.
// A build's own exclude naming a missing axis is a mistake; a top-level one
// may name an axis that only some builds have (checked once per file).
func (w *walker) excludeApplies(e entry, names []string) bool {
	ok := true
	for _, x := range e.kvs {
		if slices.Contains(names, x.key) {
			continue
		}
		ok = false
		if e.topLevel {
			w.topExcludeKeys = append(w.topExcludeKeys, x.keyNode)
		} else {
			w.errs.add(w.pos(x.keyNode), "matrix.exclude: %q is not a matrix axis; axes: %s", x.key, choices(names))
		}
	}
	return ok
}

func anyMatch(entries []entry, c combo) bool {
	for _, e := range entries {
		if matches(e.kvs, c, nil) {
			return true
		}
	}
	return false
}

// matches reports whether c agrees with every pair of kvs, considering only
// keys in onlyKeys when that is non-nil.
func matches(kvs []kv, c combo, onlyKeys []string) bool {
	for _, x := range kvs {
		if onlyKeys != nil && !slices.Contains(onlyKeys, x.key) {
			continue
		}
		if v, ok := c.get(x.key); !ok || v != x.val {
			return false
		}
	}
	return true
}

func applyIncludes(base []combo, spec *matrixSpec) []combo {
	names := spec.axisNames()
	if names == nil {
		names = []string{}
	}
	nBase := len(base)
	for _, inc := range spec.include {
		matched := false
		// Only the original combinations are extended: an include that
		// overwrites an original axis value becomes a new combination.
		for i := 0; i < nBase; i++ {
			if !matches(inc.kvs, base[i], names) {
				continue
			}
			matched = true
			for _, x := range inc.kvs {
				base[i] = base[i].with(x)
			}
		}
		if !matched {
			base = append(base, combo(append([]kv(nil), inc.kvs...)))
		}
	}
	return base
}

func (s *matrixSpec) axisNames() []string {
	names := make([]string, len(s.axes))
	for i, a := range s.axes {
		names[i] = a.name
	}
	return names
}
