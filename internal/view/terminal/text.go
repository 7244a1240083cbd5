package terminal

import (
	"strings"

	"github.com/mattn/go-runewidth"
)

// cells measures text in terminal cells. The condition is fixed rather than
// read from the locale so that a frame's layout (and the golden files) do
// not depend on the environment; every glyph the view draws itself is
// narrow in non-East-Asian terminals.
var cells = &runewidth.Condition{EastAsianWidth: false}

// width is the number of terminal cells s takes.
func width(s string) int { return cells.StringWidth(s) }

// visibleWidth is the number of cells a painted line takes: its colour
// codes (CSI sequences, the only escapes a frame holds) take none.
func visibleWidth(line string) int {
	n := 0
	for {
		i := strings.Index(line, "\x1b[")
		if i < 0 {
			return n + width(line)
		}
		n += width(line[:i])
		line = line[i+2:]
		// A CSI sequence ends with its first byte in 0x40..0x7e.
		end := strings.IndexFunc(line, func(r rune) bool { return r >= 0x40 && r <= 0x7e })
		if end < 0 {
			return n
		}
		line = line[end+1:]
	}
}

// ellipsize shortens s to at most w cells, ending it with "…" when cut.
func ellipsize(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return cells.Truncate(s, w, "…")
}

// style is how a segment of a line is coloured.
type style int

const (
	plain style = iota
	bold
	dim
	green
	yellow
	red
	cyan
)

// sgr holds the escape sequence that starts each style.
var sgr = map[style]string{
	bold:   "\x1b[1m",
	dim:    "\x1b[2m",
	green:  "\x1b[32m",
	yellow: "\x1b[33m",
	red:    "\x1b[31m",
	cyan:   "\x1b[36m",
}

const reset = "\x1b[0m"

// seg is one piece of a line. Lines are laid out from segments so that the
// optional ones can be dropped and the one flexible piece (a name) can be
// shortened when the terminal is narrow.
type seg struct {
	text  string
	style style
	// drop ranks optional segments: the highest goes first when the line
	// does not fit; 0 means the segment is never dropped. On the flexible
	// segment it is the rank at which the name gives up cells down to min
	// before segments of its rank and lower are dropped.
	drop int
	// flex marks the segment that is shortened with an ellipsis; it is
	// never dropped.
	flex bool
	min  int
}

// fit lays segs out in at most w cells: it drops optional segments, highest
// rank first, shortening the flexible one to its min when its rank comes
// up; then shortens the flexible one as far as needed; then cuts the line.
func fit(segs []seg, w int) []seg {
	out := append([]seg(nil), segs...)
	for total(out) > w {
		i := mostDroppable(out)
		if i < 0 {
			break
		}
		if f := flexIndex(out); f >= 0 && out[f].drop >= out[i].drop && width(out[f].text) > out[f].min {
			out[f].text = ellipsize(out[f].text, max(out[f].min, width(out[f].text)-(total(out)-w)))
			continue
		}
		out = append(out[:i], out[i+1:]...)
	}
	if over := total(out) - w; over > 0 {
		if f := flexIndex(out); f >= 0 {
			out[f].text = ellipsize(out[f].text, max(1, width(out[f].text)-over))
		}
	}
	return cut(out, w)
}

func flexIndex(segs []seg) int {
	for i, s := range segs {
		if s.flex {
			return i
		}
	}
	return -1
}

// cut truncates the segments to w cells whatever they hold; the last resort
// of a very narrow terminal.
func cut(segs []seg, w int) []seg {
	var out []seg
	left := w
	for _, s := range segs {
		if left <= 0 {
			break
		}
		if width(s.text) > left {
			s.text = ellipsize(s.text, left)
		}
		left -= width(s.text)
		out = append(out, s)
	}
	return out
}

func total(segs []seg) int {
	n := 0
	for _, s := range segs {
		n += width(s.text)
	}
	return n
}

// mostDroppable is the optional segment to drop next; the flexible one is
// never dropped.
func mostDroppable(segs []seg) int {
	best := -1
	for i, s := range segs {
		if !s.flex && s.drop > 0 && (best < 0 || s.drop > segs[best].drop) {
			best = i
		}
	}
	return best
}

// paint joins segments into one line, with colour only when asked.
func paint(segs []seg, color bool) string {
	var b strings.Builder
	for _, s := range segs {
		if color && s.style != plain && s.text != "" {
			b.WriteString(sgr[s.style])
			b.WriteString(s.text)
			b.WriteString(reset)
			continue
		}
		b.WriteString(s.text)
	}
	return b.String()
}

// line lays out and paints segments in one go.
func line(segs []seg, w int, color bool) string {
	return paint(fit(segs, w), color)
}

// wrapCells breaks s into rows of at most first cells (the first row) and
// rest cells (the others), between words where it can; a word longer than
// a row is broken inside.
func wrapCells(s string, first, rest int) []string {
	var rows []string
	limit := first
	for {
		if width(s) <= limit {
			return append(rows, s)
		}
		row := cells.Truncate(s, limit, "")
		if i := strings.LastIndexByte(row, ' '); i > 0 {
			row = row[:i]
		}
		rows = append(rows, row)
		s = strings.TrimLeft(s[len(row):], " ")
		limit = rest
	}
}
