package matrix

import (
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/settings"
	"github.com/trt-action/trt-action/internal/text"

	"go.yaml.in/yaml/v3"
)

// A build may say `trtexec: "--onnx=m.onnx --fp16 ..."`: its build flags
// become the build's keys. A line is one source of a build's keys among
// four, each a mapping whose keys say each setting in its one place
// (aliases.go): the defaults' line, the defaults, the build's own line and
// the build, each winning over the ones before it, and mappings merging
// entry by entry (load.go's merge). So keys written next to a line win
// over its flags, and every written key wins over a line in defaults.
// trtexecLine goes the other way. What each flag means is the settings
// table's (internal/settings); this file splits the line and turns what
// the flags say into YAML nodes, so the decoder checks them exactly as if
// they were written as keys.

// trtexecKeys collects the keys a line sets, as YAML nodes; it is the
// settings.Writer the table's flags write to.
type trtexecKeys struct {
	at    *yaml.Node // the trtexec string: every node gets its position
	order []string
	nodes map[string]*yaml.Node
	flags map[string]string // key -> the flag that set it, for messages

	word      string             // the flag being read, as written: --memPoolSize=workspace:1G
	writers   map[string]written // a place (key and path) -> the flag that wrote it
	conflicts []string           // two flags of the line that set one place
	groups    profileGroups      // the line's --profile=N groups (trtexecprofiles.go)
}

// written is who wrote a place of a line: fill is --shapes, which gives
// way to any flag that names the place.
type written struct {
	word string
	fill bool
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

// claim records that the flag being read writes place (key and path); a
// place another flag of the line wrote already is a conflict, as two
// spellings of one key in one mapping are (--workspace=1024 with
// --memPoolSize=workspace:1500M). It reports whether to write.
func (k *trtexecKeys) claim(key string, path []string, fill bool) bool {
	place := strings.Join(append([]string{key}, path...), ".")
	prev, taken := k.writers[place]
	switch {
	case !taken || prev.fill && !fill:
		k.writers[place] = written{word: k.word, fill: fill}
		return true
	case fill:
		return false // --shapes gives way
	case prev.word == k.word:
		k.conflicts = append(k.conflicts, fmt.Sprintf("%s sets %s twice; keep one", k.word, place))
	default:
		k.conflicts = append(k.conflicts, fmt.Sprintf("%s and %s both set %s; keep one", prev.word, k.word, place))
	}
	return false
}

// Set writes key: value.
func (k *trtexecKeys) Set(key, value string) {
	if k.claim(key, nil, false) {
		k.set(key, k.scalar(value))
	}
}

// Append adds an item to a key holding a list.
func (k *trtexecKeys) Append(key, item string) {
	n, ok := k.nodes[key]
	if !ok || n.Kind != yaml.SequenceNode {
		n = k.node(yaml.SequenceNode, "!!seq", "")
		k.set(key, n)
	}
	n.Content = append(n.Content, k.scalar(item))
}

// Put writes key: {path...: value}.
func (k *trtexecKeys) Put(key string, path []string, value string) {
	if place, at := k.place(key, path); k.claim(place, at, false) {
		k.put(key, path, value)
	}
}

// place is what a flag that writes key: {path...} claims: in a line with
// --profile, a shape flag writes its group's shapes (profiles.N.input.min).
func (k *trtexecKeys) place(key string, path []string) (string, []string) {
	if key == shapesKey && k.groups.on {
		return profilesKey, append([]string{strconv.Itoa(k.groups.open)}, path...)
	}
	return key, path
}

// Profile opens the group of --profile=index: the shape flags right after
// it are that profile's.
func (k *trtexecKeys) Profile(index int) {
	if msg := k.groups.start(index, k.word); msg != "" {
		k.conflicts = append(k.conflicts, msg)
	}
}

// Fill writes key: {path...: value} unless another flag of the line
// gives it.
func (k *trtexecKeys) Fill(key string, path []string, value string) {
	if k.claim(key, path, true) {
		k.put(key, path, value)
	}
}

// put writes key: {path...: value}, replacing a value --shapes filled in
// place. In a line with --profile, the shape flags write the open group's
// shapes instead (profileGroups).
func (k *trtexecKeys) put(key string, path []string, value string) {
	if key == shapesKey && k.groups.on {
		k.putIn(k.groups.shapes[k.groups.open], path, value)
		return
	}
	n, ok := k.nodes[key]
	if !ok || n.Kind != yaml.MappingNode {
		n = k.node(yaml.MappingNode, "!!map", "")
		k.set(key, n)
	}
	k.putIn(n, path, value)
}

// putIn writes {path...: value} into mapping m, making the mappings on the
// way.
func (k *trtexecKeys) putIn(m *yaml.Node, path []string, value string) {
	for _, p := range path[:len(path)-1] {
		c, ok := child(m, p)
		if !ok {
			c = k.node(yaml.MappingNode, "!!map", "")
			m.Content = append(m.Content, k.scalar(p), c)
		}
		m = c
	}
	last := path[len(path)-1]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == last {
			m.Content[i+1] = k.scalar(value)
			return
		}
	}
	m.Content = append(m.Content, k.scalar(last), k.scalar(value))
}

func child(m *yaml.Node, key string) (*yaml.Node, bool) {
	for i := 0; m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1], true
		}
	}
	return nil, false
}

// asMapping is the keys the line set, as one mapping at the line.
func (k *trtexecKeys) asMapping() *yaml.Node {
	m := k.node(yaml.MappingNode, "!!map", "")
	for _, key := range k.order {
		m.Content = append(m.Content, k.scalar(key), k.nodes[key])
	}
	return m
}

// lineRead is what decoding learnt from one trtexec line of a build.
type lineRead struct {
	at    Pos
	flags map[string]string // key -> the line's flag that set it
	tool  string            // the backend whose tool leads the line; "" none
}

// readLine reads the trtexec line n (a build's or its defaults'): its
// errors and warnings go to the file's, and its keys come back as one
// mapping; nil when there is nothing to add.
func (d *decoder) readLine(n *yaml.Node) *yaml.Node {
	line := resolve(n)
	text, ok := d.text(line, "trtexec", "a trtexec command line")
	if !ok {
		return nil
	}
	r := parseTrtexec(text, line)
	at := d.w.pos(line)
	for _, e := range r.errs {
		d.w.errs.add(at, "trtexec: %s", e)
	}
	if len(r.ignored) > 0 {
		d.w.warns.add(at, "trtexec: %s", ignoredNote(r.ignored))
	}
	for _, w := range r.warnings {
		d.w.warns.add(at, "trtexec: %s", w)
	}
	d.trtexecIgnored = append(d.trtexecIgnored, r.ignored...)
	d.trtexecWarnings = append(d.trtexecWarnings, r.warnings...)
	d.lines = append(d.lines, lineRead{at: at, flags: r.keys.flags, tool: r.tool})
	return r.keys.asMapping()
}

// withLines is the build's keys from its four sources (see the top of
// this file), the lines read for this matrix combination.
func (d *decoder) withLines(src *buildSource) *yaml.Node {
	var n *yaml.Node
	if src.defaultsLine != nil {
		n = d.readLine(src.defaultsLine)
	}
	n = d.w.mergeBuild(n, src.defaults)
	if src.line != nil {
		n = d.w.mergeBuild(n, d.readLine(src.line))
	}
	return d.w.mergeBuild(n, src.keys)
}

// checkLineTools warns when a line's program is another backend's tool
// than the build's (tensorrt_rtx under backend: tensorrt): the flags are
// read for the build's backend. The simulator stands in for any backend.
func (d *decoder) checkLineTools(b Build) {
	be := backend.Of(b.Backend)
	for _, l := range d.lines {
		if l.tool == "" || l.tool == b.Backend || be.Simulated || be.Name == "" {
			continue
		}
		d.w.warns.add(l.at, "trtexec: the line runs %s, the tool of backend %s, but the build's backend is %s: its flags are read as %s flags",
			backend.Of(l.tool).Tool, l.tool, b.Backend, cmp.Or(be.Tool, b.Backend))
	}
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
		if i := slices.IndexFunc(d.lines, func(l lineRead) bool { return l.at == e.Pos }); i >= 0 {
			for key, flag := range d.lines[i].flags {
				if strings.HasPrefix(e.Msg, key+":") || strings.HasPrefix(e.Msg, key+".") || strings.HasPrefix(e.Msg, key+"[") ||
					strings.HasPrefix(e.Msg, key+" and ") {
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
	tool     string   // the backend whose tool leads the line, if one does
	ignored  []string // inference-only flags
	warnings []string
	errs     []string
}

// parseTrtexec reads a trtexec command line: the program may lead (a bare
// name or a path, POSIX or Windows, with or without .exe), and names the
// backend when the build does not; every other word is --flag or
// --flag=value, each given once but for the plugin flags, as trtexec reads
// them.
func parseTrtexec(line string, at *yaml.Node) parsedLine {
	r := parsedLine{keys: &trtexecKeys{at: at, nodes: map[string]*yaml.Node{}, flags: map[string]string{}, writers: map[string]written{}}}
	words, err := shellWords(line)
	if err != nil {
		r.errs = []string{err.Error()}
		return r
	}
	if len(words) > 0 {
		if be, ok := toolBackend(words[0]); ok {
			r.tool, words = be.Name, words[1:]
			r.keys.Set("backend", be.Name)
		}
	}
	given := map[string]bool{}
	g := &r.keys.groups
	*g = newProfileGroups(hasProfileFlag(words))
	for _, w := range words {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if !strings.HasPrefix(w, "--") || name == "" {
			r.errs = append(r.errs, fmt.Sprintf("%s is not a flag; write --name or --name=value", quoted(w)))
			continue
		}
		info := settings.Classify(name)
		if given[name] && info.Class != settings.Unknown && !info.Repeatable() && !g.repeats(info) {
			r.errs = append(r.errs, fmt.Sprintf("--%s is given twice; trtexec takes each flag once (a second is an unknown option to it), "+
				"but for the plugin libraries", name))
			continue
		}
		given[name] = true
		if g.on {
			done, err := r.grouped(w, info, value, hasValue)
			if err != "" {
				r.errs = append(r.errs, err)
			}
			if done {
				continue
			}
		}
		switch info.Class {
		case settings.Mapped:
			r.keys.word = w
			warnings, err := info.Read(r.keys, value, hasValue)
			r.errs = append(r.errs, r.keys.conflicts...)
			r.keys.conflicts = nil
			if err != nil {
				r.errs = append(r.errs, err.Error())
				continue
			}
			r.keys.flags[info.Setting.Key] = "--" + name
			r.warnings = append(r.warnings, warnings...)
		case settings.InferenceOnly:
			r.ignored = append(r.ignored, "--"+name)
		case settings.NoOp, settings.Ignored:
			r.warnings = append(r.warnings, fmt.Sprintf("--%s: %s; ignored", name, info.Why))
		case settings.Refused:
			r.errs = append(r.errs, fmt.Sprintf("--%s is not supported by trt-action: %s", name, info.Why))
		default:
			msg := fmt.Sprintf("unknown flag --%s", name)
			if c, ok := ownEarlierSpellings[name]; ok {
				msg += fmt.Sprintf(" (no trtexec has it; earlier versions of trt-action printed it in plan --trtexec: write --%s)", c)
			} else if c := closest(name, settings.FlagNames()); c != "" {
				msg += fmt.Sprintf(" (did you mean --%s?)", c)
			}
			r.errs = append(r.errs, msg+"; docs/builder-settings.md lists the trtexec flags trt-action reads")
		}
	}
	r.errs = append(r.errs, g.finish(r.keys)...)
	return r
}

// ownEarlierSpellings are flags no trtexec has that trt-action itself once
// read and printed in plan --trtexec, each with trtexec's own flag. A line
// saved from that output is refused (trtexec would refuse it too), saying
// what to write instead, which is too far from the name for closest.
var ownEarlierSpellings = map[string]string{"weightStreaming": "allowWeightStreaming"}

// toolBackend is the backend whose tool word names: a bare trtexec or
// tensorrt_rtx, or a path of either kind (/usr/src/tensorrt/bin/trtexec,
// C:\TensorRT-RTX\bin\tensorrt_rtx.exe).
func toolBackend(word string) (backend.Backend, bool) {
	base := path.Base(strings.ReplaceAll(word, `\`, "/"))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".EXE")
	all := backend.All()
	i := slices.IndexFunc(all, func(b backend.Backend) bool { return b.Tool != "" && b.Tool == base })
	if i < 0 {
		return backend.Backend{}, false
	}
	return all[i], true
}

// shellWords splits a command line the way a POSIX shell would for plain
// words and 'single' and "double" quotes. A backslash escapes only a
// quote, a space, another backslash or a newline (which joins lines); any
// other backslash is a character of the word, so a Windows path such as
// C:\TensorRT-RTX\bin\tensorrt_rtx.exe reads as written. A backslash that
// stands alone between blanks continues the line: it is what a shell
// line's trailing backslash becomes when YAML folds the line break of a
// plain or folded (>) scalar into a space. Inside a word, a\ b is still an
// escaped space.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && !inWord && (i+1 == len(s) || isBlank(s[i+1])):
			// a folded continuation: nothing of the command
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
		case isBlank(c):
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

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

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
		quoted[i] = text.ShellQuote(w)
	}
	return strings.Join(quoted, " "), missing, notes
}

// PlanTrtexec writes each build as a comment line naming it, then its
// trtexec line; what the line cannot say is listed in comments, so
// nothing is silently left out.
func PlanTrtexec(w io.Writer, builds []Build) {
	for _, b := range builds {
		fmt.Fprintf(w, "# %s\n", text.Escaped(b.Name))
		if s := b.Script; s != nil {
			// Its own command builds it: that is its line.
			fmt.Fprintf(w, "# runs its own command (run:), which has no trtexec line, in %s", text.Escaped(s.Workdir))
			if names := s.EnvNames(); len(names) > 0 {
				fmt.Fprintf(w, ", with env: %s", text.Escaped(strings.Join(names, ", ")))
			}
			fmt.Fprintf(w, "\n%s\n", text.Escaped(text.ShellLine(s.Argv)))
			continue
		}
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
