package matrix

import (
	"strings"

	"github.com/trt-action/trt-action/internal/settings"

	"go.yaml.in/yaml/v3"
)

// A key may be another way to write part of a setting (the settings
// table's AliasOf: workspace is memory-pools.workspace). Each source of a
// build's keys (the defaults, the build, a trtexec line) says every
// setting in its one place before the sources are merged, so a build's
// workspace wins over its defaults' memory-pools.workspace as any key of a
// build wins over its defaults', whichever way each was written. Two
// spellings of one place in one mapping are an error: nothing says which
// was meant.

// canonical is mapping m with each alias key moved to the place it
// writes, in new nodes (m may be shared through a YAML anchor). A
// non-mapping comes back as it is.
func (w *walker) canonical(m *yaml.Node) *yaml.Node {
	m = resolve(m)
	if isNull(m) || m.Kind != yaml.MappingNode || !hasAlias(m) {
		return m
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: m.Tag, Line: m.Line, Column: m.Column, Content: append([]*yaml.Node(nil), m.Content...)}
	for _, row := range settings.All() {
		if row.AliasOf != "" {
			w.moveAlias(out, row)
		}
	}
	return out
}

func hasAlias(m *yaml.Node) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if row, ok := settings.Lookup(m.Content[i].Value); ok && row.AliasOf != "" {
			return true
		}
	}
	return false
}

// moveAlias moves row's key in mapping m (which canonical owns) to the
// part of the setting it writes.
func (w *walker) moveAlias(m *yaml.Node, row settings.Setting) {
	ai := index(m, row.Key)
	if ai < 0 {
		return
	}
	aliasKey, value := resolve(m.Content[ai]), m.Content[ai+1]
	m.Content = append(m.Content[:ai], m.Content[ai+2:]...)
	target, part, _ := strings.Cut(row.AliasOf, ".")
	partKey := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: part, Line: aliasKey.Line, Column: aliasKey.Column}
	w.aliasKeys[partKey] = row.Key
	ti := index(m, target)
	if ti < 0 {
		targetKey := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: target, Line: aliasKey.Line, Column: aliasKey.Column}
		into := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: value.Line, Column: value.Column, Content: []*yaml.Node{partKey, value}}
		m.Content = append(m.Content, targetKey, into)
		return
	}
	into := resolve(m.Content[ti+1])
	switch {
	case isNull(into):
		into = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: into.Line, Column: into.Column}
	case into.Kind != yaml.MappingNode:
		return // reported as the setting's own type error
	}
	if pi := index(into, part); pi >= 0 {
		if written := resolve(into.Content[pi]); w.pos(written).before(w.pos(aliasKey)) {
			w.errs.add(w.pos(aliasKey), "%s is another way to write %s (at %s); keep one", row.Key, row.AliasOf, w.pos(written))
		} else {
			w.errs.add(w.pos(written), "%s is also written as %s (at %s); keep one", row.AliasOf, row.Key, w.pos(aliasKey))
		}
		return
	}
	m.Content[ti+1] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: into.Line, Column: into.Column,
		Content: append(append([]*yaml.Node(nil), into.Content...), partKey, value)}
}

// index is the position of key's key node in mapping m's Content, or -1.
func index(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if resolve(m.Content[i]).Value == key {
			return i
		}
	}
	return -1
}

// aliasName is how a message names the entry whose key node is k: the
// alias it was written as (workspace), or what: memory-pools.workspace.
func (w *walker) aliasName(k *yaml.Node, what string) string {
	if name, ok := w.aliasKeys[k]; ok {
		return name
	}
	return what
}
