package logview

import (
	"io"
	"strings"

	"github.com/trt-action/trt-action/internal/event"
)

// PlainView writes bounded progress lines for logs that are neither a
// terminal nor GitHub Actions: heartbeats at most about once per Interval per
// build, phase start and finish lines down to Depth, and each build's result.
type PlainView struct {
	w     io.Writer
	liner *liner
	err   error
}

// NewPlainView writes to w.
func NewPlainView(w io.Writer, opts PlainOptions) *PlainView {
	return &PlainView{w: w, liner: newLiner(opts)}
}

// Handle implements event.View.
func (v *PlainView) Handle(ev event.Event) {
	lines := v.liner.lines(ev)
	if len(lines) == 0 || v.err != nil {
		return
	}
	_, v.err = io.WriteString(v.w, strings.Join(lines, "\n")+"\n")
}

// Close implements event.View; it returns the first write error.
func (v *PlainView) Close() error { return v.err }
