package matrix

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pair is one key/value of a YAML mapping, aliases resolved.
type pair struct {
	key *yaml.Node
	val *yaml.Node
}

// resolve follows aliases so callers see the anchored node.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// describe names what a node is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch {
	case n == nil || isNull(n):
		return "nothing (null)"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Tag == "!!int" || n.Tag == "!!float":
		return "the number " + n.Value
	case n.Tag == "!!bool":
		return "the boolean " + n.Value
	default:
		return fmt.Sprintf("the string %q", n.Value)
	}
}

// pairs lists a mapping's entries in order, reporting repeated keys.
// A null node is an empty mapping; anything else that is not a mapping is
// reported as a type error and yields nothing.
func (w *walker) pairs(n *yaml.Node, what string) []pair {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		w.errs.add(w.pos(n), "%s: expected a mapping, got %s", what, describe(n))
		return nil
	}
	out := make([]pair, 0, len(n.Content)/2)
	first := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			w.errs.add(w.pos(k), "keys must be strings, got %s", describe(k))
			continue
		}
		if prev, dup := first[k.Value]; dup {
			w.errs.add(w.pos(k), "key %q repeated (first at %s)", k.Value, w.pos(prev))
			continue
		}
		first[k.Value] = k
		out = append(out, pair{key: k, val: v})
	}
	return out
}

// fieldSet is a mapping's entries for a fixed set of allowed keys. Only
// the keys present are kept, in a slice: a build allows some forty keys,
// writes a handful, and a matrix may expand to many thousand builds.
type fieldSet struct {
	allowed []string
	vals    []pair // the present entries, each key in allowed, in file order
}

func (fs fieldSet) get(key string) (pair, bool) {
	for _, p := range fs.vals {
		if p.key.Value == key {
			return p, true
		}
	}
	return pair{}, false
}

// all yields every present key, in the order of allowed.
func (fs fieldSet) all() iter.Seq2[string, pair] {
	return func(yield func(string, pair) bool) {
		for _, k := range fs.allowed {
			if p, ok := fs.get(k); ok && !yield(k, p) {
				return
			}
		}
	}
}

// val is the value of key, or nil when absent.
func (fs fieldSet) val(key string) *yaml.Node {
	p, _ := fs.get(key)
	return p.val
}

// fields reads a mapping whose keys are fixed, reporting unknown keys with
// the allowed ones and the closest spelling.
func (w *walker) fields(n *yaml.Node, what string, allowed []string) fieldSet {
	ps := w.pairs(n, what)
	fs := fieldSet{allowed: allowed, vals: make([]pair, 0, len(ps))}
	for _, p := range ps {
		if !slices.Contains(allowed, p.key.Value) {
			w.errs.add(w.pos(p.key), "%s", unknownKey(p.key.Value, what, allowed))
			continue
		}
		fs.vals = append(fs.vals, p)
	}
	return fs
}

func unknownKey(key, what string, allowed []string) string {
	msg := fmt.Sprintf("unknown key %q in %s", key, what)
	if s := closest(key, allowed); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; allowed: " + strings.Join(allowed, ", ")
}

// items lists a sequence's elements; a null node is an empty list.
func (w *walker) items(n *yaml.Node, what, want string) ([]*yaml.Node, bool) {
	n = resolve(n)
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		w.errs.add(w.pos(n), "%s: expected %s, got %s", what, want, describe(n))
		return nil, false
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = resolve(c)
	}
	return out, true
}

// closest returns the candidate within edit distance 2 of s, if any. A
// short s must keep at least half of it: "x" is no typo of "vc", and
// nothing is suggested for nothing.
func closest(s string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestDist && 2*d <= len(s) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// choices renders a list of allowed values for messages.
func choices(list []string) string { return strings.Join(list, ", ") }
