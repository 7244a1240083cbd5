package matrix

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/settings"
	"github.com/trt-action/trt-action/internal/text"

	"go.yaml.in/yaml/v3"
)

// A build may say `trtexec: "--onnx=m.onnx --fp16 ..."`: its build flags
// become the build's keys. Keys written next to the line (in the same
// mapping, or in the build when the line comes from defaults) win over its
// flags. trtexecLine goes the other way. What each flag means is the
// settings table's (internal/settings); this file splits the line and turns
// what the flags say into YAML nodes, so the decoder checks them exactly as
// if they were written as keys.

// trtexecKeys collects the keys a line sets, as YAML nodes; it is the
// settings.Writer the table's flags write to.
type trtexecKeys struct {
	at    *yaml.Node // the trtexec string: every node gets its position
	order []string
	nodes map[string]*yaml.Node
	flags map[string]string // key -> the flag that set it, for messages
}

func (k *trtexecKeys) node(kind yaml.Kind, tag, value string) *yaml.Node {
	return &yaml.Node{Kind: kind, Tag: tag, Value: value, Line: k.at.Line, Column: k.at.Column}
}

func (k *trtexecKeys) scalar(s string) *yaml.Node { return k.node(yaml.ScalarNode, "!!str", s) }

func (k *trtexecKeys) set(key string, n *yaml.Node) {
	if _, seen := k.nodes[key]; !seen {
		k.order = append(k.order, key)
	}
	k.nodes[key] = n
}

// Set writes key: value.
func (k *trtexecKeys) Set(key, value string) { k.set(key, k.scalar(value)) }

// Append adds an item to a key holding a list.
func (k *trtexecKeys) Append(key, item string) {
	n, ok := k.nodes[key]
	if !ok || n.Kind != yaml.SequenceNode {
		n = k.node(yaml.SequenceNode, "!!seq", "")
		k.set(key, n)
	}
	n.Content = append(n.Content, k.scalar(item))
}

// Put writes key: {path...: value}, replacing an earlier value in place.
func (k *trtexecKeys) Put(key string, path []string, value string) {
	m := k.mapping(key, path[:len(path)-1]...)
	last := path[len(path)-1]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == last {
			m.Content[i+1] = k.scalar(value)
			return
		}
	}
	m.Content = append(m.Content, k.scalar(last), k.scalar(value))
}

// Has reports whether key: {path...} was written.
func (k *trtexecKeys) Has(key string, path []string) bool {
	n, ok := k.nodes[key]
	for _, p := range path {
		if !ok {
			return false
		}
		n, ok = child(n, p)
	}
	return ok
}

func child(m *yaml.Node, key string) (*yaml.Node, bool) {
	for i := 0; m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1], true
		}
	}
	return nil, false
}

// mapping returns the mapping under key, then under each of path.
func (k *trtexecKeys) mapping(key string, path ...string) *yaml.Node {
	n, ok := k.nodes[key]
	if !ok || n.Kind != yaml.MappingNode {
		n = k.node(yaml.MappingNode, "!!map", "")
		k.set(key, n)
	}
	for _, p := range path {
		c, ok := child(n, p)
		if !ok {
			c = k.node(yaml.MappingNode, "!!map", "")
			n.Content = append(n.Content, k.scalar(p), c)
		}
		n = c
	}
	return n
}

// withTrtexec returns n with the trtexec line's keys added, unless a key
// that wins over the line is written; own lists the build's own keys.
func (d *decoder) withTrtexec(n *yaml.Node, own map[string]bool) *yaml.Node {
	var line *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "trtexec" {
			line = resolve(n.Content[i+1])
		}
	}
	if line == nil {
		return n
	}
	text, ok := d.text(line, "trtexec", "a trtexec command line")
	if !ok {
		return n
	}
	r := parseTrtexec(text, line)
	for _, e := range r.errs {
		d.w.errs.add(d.w.pos(line), "trtexec: %s", e)
	}
	if len(r.ignored) > 0 {
		d.w.warns.add(d.w.pos(line), "trtexec: %s", ignoredNote(r.ignored))
	}
	for _, w := range r.warnings {
		d.w.warns.add(d.w.pos(line), "trtexec: %s", w)
	}
	d.trtexecIgnored, d.trtexecWarnings = r.ignored, r.warnings
	d.trtexecAt, d.trtexecFlags = d.w.pos(line), r.keys.flags
	wins := func(key string) bool {
		if own["trtexec"] {
			return own[key]
		}
		return true // the line comes from defaults: every written key wins
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	written := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if _, fromLine := r.keys.nodes[key]; fromLine && !wins(key) {
			continue
		}
		written[key] = true
		out.Content = append(out.Content, n.Content[i], n.Content[i+1])
	}
	for _, key := range r.keys.order {
		if !written[key] {
			out.Content = append(out.Content, r.keys.scalar(key), r.keys.nodes[key])
		}
	}
	return out
}

// ignoredNote is how the inference-only flags of a line are mentioned.
func ignoredNote(flags []string) string {
	return "ignored (they only matter when trtexec runs the engine): " + strings.Join(flags, " ")
}

// nameTrtexecFlags rewrites the errors found since mark about keys a
// trtexec line set, so they name the flag the user wrote: "trtexec
// --builderOptimizationLevel: opt-level: expected an integer from 0 to 5".
func (d *decoder) nameTrtexecFlags(mark int) {
	c := &d.w.errs
	kept := c.errs[:mark]
	for _, e := range c.errs[mark:] {
		if e.Pos == d.trtexecAt {
			for key, flag := range d.trtexecFlags {
				if strings.HasPrefix(e.Msg, key+":") || strings.HasPrefix(e.Msg, key+".") || strings.HasPrefix(e.Msg, key+" and ") {
					e.Msg = "trtexec " + flag + ": " + e.Msg
					break
				}
			}
			if c.seen[e] && !slices.Contains(c.errs[mark:], e) {
				continue // the same rewritten error, from another combination of the matrix
			}
			c.seen[e] = true
		}
		kept = append(kept, e)
	}
	c.errs = kept
}

// parsedLine is what a trtexec line says.
type parsedLine struct {
	keys     *trtexecKeys
	ignored  []string // inference-only flags
	warnings []string
	errs     []string
}

// parseTrtexec reads a trtexec command line: the program may lead (a bare
// name or a path, POSIX or Windows, with or without .exe); every other
// word is --flag or --flag=value.
func parseTrtexec(line string, at *yaml.Node) parsedLine {
	r := parsedLine{keys: &trtexecKeys{at: at, nodes: map[string]*yaml.Node{}, flags: map[string]string{}}}
	words, err := shellWords(line)
	if err != nil {
		r.errs = []string{err.Error()}
		return r
	}
	if len(words) > 0 && isTool(words[0]) {
		words = words[1:]
	}
	for _, w := range words {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if !strings.HasPrefix(w, "--") || name == "" {
			r.errs = append(r.errs, fmt.Sprintf("%q is not a flag; write --name or --name=value", w))
			continue
		}
		info := settings.Classify(name)
		switch info.Class {
		case settings.Mapped:
			warnings, err := info.Read(r.keys, value, hasValue)
			if err != nil {
				r.errs = append(r.errs, err.Error())
				continue
			}
			r.keys.flags[info.Setting.Key] = "--" + name
			r.warnings = append(r.warnings, warnings...)
		case settings.InferenceOnly:
			r.ignored = append(r.ignored, "--"+name)
		case settings.NoOp:
			r.warnings = append(r.warnings, fmt.Sprintf("--%s: %s; ignored", name, info.Why))
		case settings.Refused:
			r.errs = append(r.errs, fmt.Sprintf("--%s is not supported by trt-action: %s", name, info.Why))
		default:
			msg := fmt.Sprintf("unknown flag --%s", name)
			if c := closest(name, settings.FlagNames()); c != "" {
				msg += fmt.Sprintf(" (did you mean --%s?)", c)
			}
			r.errs = append(r.errs, msg+"; docs/builder-settings.md lists the trtexec flags trt-action reads")
		}
	}
	return r
}

// isTool reports whether word names trtexec or tensorrt_rtx: a bare name,
// or a path of either kind (/usr/src/tensorrt/bin/trtexec,
// C:\TensorRT-RTX\bin\tensorrt_rtx.exe).
func isTool(word string) bool {
	base := path.Base(strings.ReplaceAll(word, `\`, "/"))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".EXE")
	return slices.ContainsFunc(backend.All(), func(b backend.Backend) bool { return b.Tool != "" && b.Tool == base })
}

// shellWords splits a command line the way a POSIX shell would for plain
// words and 'single' and "double" quotes. A backslash escapes only a
// quote, a space, another backslash or a newline (which joins lines); any
// other backslash is a character of the word, so a Windows path such as
// C:\TensorRT-RTX\bin\tensorrt_rtx.exe reads as written.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("'\" \t\\\n", s[i+1]) >= 0:
			i++
			if s[i] != '\n' {
				cur.WriteByte(s[i])
				inWord = true
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %c quote", c)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=+/.,:@%", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// trtexecLine is b as the command of its backend's tool (trtexec,
// tensorrt_rtx) that builds the same engine. missing lists the settings
// that have no flag (they are left out of the line); notes what a reader
// of the line must know.
func trtexecLine(b Build) (line string, missing, notes []string) {
	tool := backend.Of(b.Backend).Tool
	if tool == "" {
		return "", []string{"backend " + b.Backend + " has no trtexec equivalent"}, nil
	}
	words := []string{tool, "--onnx=" + b.ONNX, "--saveEngine=" + b.Engine}
	values := b.BuilderSettings()
	for _, row := range settings.All() {
		v, ok := values[row.Key]
		if !ok {
			continue
		}
		l := row.WriteTrtexec(v)
		words = append(words, l.Flags...)
		missing = append(missing, l.Missing...)
		notes = append(notes, l.Notes...)
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " "), missing, notes
}

// PlanTrtexec writes each build as a comment line naming it, then its
// trtexec line; what the line cannot say is listed in comments, so
// nothing is silently left out.
func PlanTrtexec(w io.Writer, builds []Build) {
	for _, b := range builds {
		fmt.Fprintf(w, "# %s\n", text.Escaped(b.Name))
		line, missing, notes := trtexecLine(b)
		for _, m := range missing {
			fmt.Fprintf(w, "# not in the line: %s\n", text.Escaped(m))
		}
		for _, n := range notes {
			fmt.Fprintf(w, "# note: %s\n", text.Escaped(n))
		}
		if len(b.TrtexecIgnored) > 0 {
			fmt.Fprintf(w, "# from its trtexec line, %s\n", ignoredNote(b.TrtexecIgnored))
		}
		for _, warning := range b.TrtexecWarnings {
			fmt.Fprintf(w, "# from its trtexec line: %s\n", text.Escaped(warning))
		}
		if line != "" {
			fmt.Fprintln(w, text.Escaped(line))
		}
	}
}
