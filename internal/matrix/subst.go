package matrix

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// substitute replaces every ${{ matrix.AXIS }} in a scalar's text with the
// combination's value. Other expressions, unknown axes and unclosed braces
// are reported at the column where the expression starts.
func (d *decoder) substitute(n *yaml.Node, s string) (string, bool) {
	if !strings.Contains(s, "${{") {
		return s, true
	}
	var out strings.Builder
	ok := true
	rest, offset := s, 0
	for {
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
		if val, good := d.lookup(expr, at); good {
			out.WriteString(val)
		} else {
			ok = false
		}
		rest, offset = rest[start+end+2:], offset+start+end+2
	}
	return out.String(), ok
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

// posAt is the position of byte offset i inside scalar n. Exact for plain
// and quoted single-line scalars (escapes aside); block scalars report the
// node itself.
func (w *walker) posAt(n *yaml.Node, i int) Pos {
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
