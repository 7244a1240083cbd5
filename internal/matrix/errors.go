package matrix

import (
	"fmt"
	"sort"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// Error is one problem in a matrix file, at the place it was written.
type Error struct {
	Pos Pos
	Msg string
}

func (e Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errors is every problem found in one file, sorted by position.
type Errors []Error

// Error joins the problems one per line as "file:line:col: message".
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// String renders the position as "file:line:col", omitting unknown parts.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	default:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	}
}

func (p Pos) before(q Pos) bool {
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Column < q.Column
}

// quoted puts a path, or another word the file gave, in double quotes as
// written, for messages: Go's %q would double each backslash of a Windows
// path the user wrote once. The collector escapes control characters of
// every message.
func quoted(s string) string { return `"` + s + `"` }

// collector gathers errors, dropping exact repeats: a mistake inside
// defaults or a build with a matrix is seen once per expanded build but
// should be reported once.
type collector struct {
	errs Errors
	seen map[Error]bool
}

func (c *collector) add(pos Pos, format string, args ...any) {
	// Messages quote text from the file; escaping control characters keeps
	// each error on one line, so file content cannot forge a line of its own.
	e := Error{Pos: pos, Msg: text.Escaped(fmt.Sprintf(format, args...))}
	if c.seen == nil {
		c.seen = make(map[Error]bool)
	}
	if c.seen[e] {
		return
	}
	c.seen[e] = true
	c.errs = append(c.errs, e)
}

// result returns the sorted errors, or nil (an untyped nil error) if none.
func (c *collector) result() error {
	if len(c.errs) == 0 {
		return nil
	}
	sort.SliceStable(c.errs, func(i, j int) bool { return c.errs[i].Pos.before(c.errs[j].Pos) })
	return c.errs
}
