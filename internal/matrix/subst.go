package matrix

import (
	"bytes"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// substitute replaces every ${{ matrix.AXIS }} in a scalar's text with the
// combination's value. Other expressions, unknown axes and unclosed braces
// are reported at the column where the expression starts.
func (d *decoder) substitute(n *yaml.Node, s string) (string, bool) {
	return d.substituteInto(n, s, nil)
}

// substituteMapped is substitute, also saying where in s each part of the
// result was written, so that a problem found in the result (a run:
// string split into words) is reported where it was written.
func (d *decoder) substituteMapped(n *yaml.Node, s string) (string, sourceMap, bool) {
	var m sourceMap
	out, ok := d.substituteInto(n, s, &m)
	return out, m, ok
}

// substituteInto is substitute, recording into m, unless nil, where each
// part of the result was written (every scalar is substituted; few need
// the map).
func (d *decoder) substituteInto(n *yaml.Node, s string, m *sourceMap) (string, bool) {
	if !strings.Contains(s, "${{") {
		return s, true
	}
	var out strings.Builder
	ok := true
	rest, offset := s, 0
	for {
		if m != nil {
			*m = append(*m, segment{out: out.Len(), src: offset}) // what is copied next
		}
		start := strings.Index(rest, "${{")
		if start < 0 {
			out.WriteString(rest)
			break
		}
		out.WriteString(rest[:start])
		at := d.w.posAt(n, offset+start)
		end := strings.Index(rest[start:], "}}")
		if end < 0 {
			d.w.errs.add(at, "unclosed ${{ expression; write ${{ matrix.AXIS }}")
			return "", false
		}
		expr := strings.TrimSpace(rest[start+3 : start+end])
		if m != nil {
			*m = append(*m, segment{out: out.Len(), src: offset + start, value: true})
		}
		if val, good := d.lookup(expr, at); good {
			out.WriteString(val)
		} else {
			ok = false
		}
		rest, offset = rest[start+end+2:], offset+start+end+2
	}
	return out.String(), ok
}

// sourceMap says where the parts of a substituted string were written:
// segments in the order of the result, each from its offset in the
// result on; none when nothing was substituted (the result is the string
// as written).
type sourceMap []segment

// segment is text copied from offset src of the string as written, or,
// when value, a matrix value substituted for the expression at src.
type segment struct {
	out, src int
	value    bool
}

// source is the offset, in the string as written, of byte i of the
// result: within a substituted value, the expression's.
func (m sourceMap) source(i int) int {
	k := sort.Search(len(m), func(k int) bool { return m[k].out > i }) - 1
	if k < 0 {
		return i
	}
	if m[k].value {
		return m[k].src
	}
	return m[k].src + i - m[k].out
}

func (d *decoder) lookup(expr string, at Pos) (string, bool) {
	name, isMatrix := strings.CutPrefix(expr, "matrix.")
	if !isMatrix {
		d.w.errs.add(at, "unsupported expression ${{ %s }}; only ${{ matrix.AXIS }} is allowed", expr)
		return "", false
	}
	if !d.inBuild {
		d.w.errs.add(at, "${{ matrix.%s }} is only allowed inside builds and defaults", name)
		return "", false
	}
	if val, ok := d.combo.get(name); ok {
		return val, true
	}
	names := make([]string, len(d.combo))
	for i, x := range d.combo {
		names[i] = x.key
	}
	if len(names) == 0 {
		d.w.errs.add(at, "unknown matrix axis %q: this build has no matrix", name)
		return "", false
	}
	msg := "unknown matrix axis %q"
	if s := closest(name, names); s != "" {
		msg += " (did you mean " + `"` + s + `"` + "?)"
	}
	d.w.errs.add(at, msg+"; axes: %s", name, choices(names))
	return "", false
}

// posAt is the position of byte offset i of scalar n's value: found in
// the file's text where it is at hand (sourcePos), else counted from
// where n starts, which is exact for plain and quoted one-line scalars
// (escapes aside); block scalars report the node itself.
func (w *walker) posAt(n *yaml.Node, i int) Pos {
	if p, ok := w.sourcePos(n, i); ok {
		return p
	}
	p := w.pos(n)
	switch n.Style {
	case 0, yaml.TaggedStyle:
		p.Column += i
	case yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle:
		p.Column += i + 1
	}
	if strings.Contains(n.Value, "\n") {
		return w.pos(n)
	}
	return p
}

// sourcePos finds byte i of scalar n's value in the file's text: from
// where n's value starts there, each byte of the value is the next byte of
// the text that equals it, and what the value lacks (the indentation of a
// block scalar or of a plain scalar's later lines, the line break YAML
// folded into a space, the first of two single quotes that stand for one)
// is passed over. A double-quoted scalar with escapes (\n, \x41) has
// bytes the text lacks, so it is not looked for; nor is anything that
// does not match.
func (w *walker) sourcePos(n *yaml.Node, i int) (Pos, bool) {
	if w.src == nil || n.Line < 1 || n.Line > len(w.lines()) || i > len(n.Value) {
		return Pos{}, false
	}
	at := w.offsetOf(n.Line, n.Column)
	if at >= len(w.src) {
		return Pos{}, false
	}
	switch n.Style {
	case 0:
	case yaml.SingleQuotedStyle:
		at++
	case yaml.DoubleQuotedStyle:
		if end := bytes.IndexByte(w.src[at+1:], '"'); end >= 0 && bytes.IndexByte(w.src[at+1:at+1+end], '\\') >= 0 {
			return Pos{}, false
		}
		at++
	case yaml.LiteralStyle, yaml.FoldedStyle:
		nl := bytes.IndexByte(w.src[at:], '\n')
		if nl < 0 {
			return Pos{}, false
		}
		at += nl + 1
	default:
		return Pos{}, false
	}
	for k := 0; k <= i && k < len(n.Value); k++ {
		for at < len(w.src) && w.src[at] != n.Value[k] {
			at++
		}
		if at == len(w.src) {
			return Pos{}, false
		}
		if k < i {
			at++
		}
	}
	return w.posOf(at), true
}

// lines are the offsets at which the file's lines start.
func (w *walker) lines() []int {
	if w.lineStarts == nil {
		w.lineStarts = []int{0}
		for i, c := range w.src {
			if c == '\n' {
				w.lineStarts = append(w.lineStarts, i+1)
			}
		}
	}
	return w.lineStarts
}

// offsetOf is the byte offset of line and column (1-based, the column in
// characters, as the YAML library counts them).
func (w *walker) offsetOf(line, column int) int {
	at := w.lines()[line-1]
	for c := 1; c < column && at < len(w.src) && w.src[at] != '\n'; c++ {
		_, size := utf8.DecodeRune(w.src[at:])
		at += size
	}
	return at
}

// posOf is the position of byte offset at of the file's text.
func (w *walker) posOf(at int) Pos {
	starts := w.lines()
	line := sort.SearchInts(starts, at+1) - 1
	return Pos{File: w.file, Line: line + 1, Column: 1 + utf8.RuneCount(w.src[starts[line]:at])}
}
