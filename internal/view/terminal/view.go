// Package terminal is the terminal view of a running build matrix: every running
// build with its active phases as nested bars, finished builds as one line
// each, and a table at the end. A build that runs a command shows the
// TensorRT build running inside it; the command's output, warnings and the
// ends of its TensorRT builds print above the live area, where they stay.
//
// Frames are a pure function of runState (renderState, renderFit, renderFinal); the
// view only applies events to its runState and decides when to draw. It owns
// no goroutine and no ticker: the supervisor sends each running build's
// heartbeat about ten times a second, so checking inside Handle whether a
// frame is due keeps the screen live, and there is nothing to lock.
//
// Why not mpb: github.com/vbauerster/mpb/v8 runs its own render goroutine
// on its own refresh timer and keeps a bar object per line. Our lines come
// and go with every phase TensorRT starts (up to eight levels deep), and
// frames must be reproducible for golden tests, so the frame is rendered
// here and only the in-place rewriting is left to cupwriter, the cursor
// writer mpb itself is built on.
package terminal

import (
	"io"
	"time"

	"github.com/vbauerster/cupwriter"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

// Options configure the terminal view.
type Options struct {
	// Width returns the terminal's width in cells; it is read before every
	// frame, so a resized terminal gets frames of its new size. Nil or a
	// result below 20 means 80.
	Width func() int
	// Height returns the terminal's height in lines, read like Width; the
	// live area is kept shorter than the screen. Nil or 0 means no limit.
	Height func() int
	// Color enables colour; false for NO_COLOR or --no-color.
	Color bool
	// Now returns the run clock (time since the run started). Nil means
	// the time of the newest event.
	Now func() time.Duration
	// MaxRate caps frames per second; 0 means 10.
	MaxRate int
	// Baseline is a previous run's report; builds with the same name that
	// succeeded there get an ETA from their previous duration.
	Baseline *report.Report
}

// view draws the live area. One goroutine calls Handle and Close.
type view struct {
	out      *cupwriter.Writer
	opts     Options
	interval time.Duration
	state    runState
	drawn    bool          // a frame is on screen
	lastDraw time.Duration // run clock at the last frame
	// shown holds the cell widths of the lines on screen that the next
	// write replaces: a frame's, none after the final table.
	shown []int
	// above holds lines to print once above the next frame, where they
	// stay: warnings.
	above []string
	err   error // the first write error; drawing stops after it
}

// New returns the terminal view writing to w, which should be a terminal.
func New(w io.Writer, opts Options) event.View {
	rate := opts.MaxRate
	if rate <= 0 {
		rate = 10
	}
	return &view{
		// forceTTY: the CLI picks this view only for a terminal, and w may
		// be a wrapper that hides the file descriptor.
		out:      cupwriter.New(w, true),
		opts:     opts,
		interval: time.Second / time.Duration(rate),
		state:    runState{Baseline: baselineDurations(opts.Baseline)},
	}
}

// Handle applies the event and draws a frame when one is due: at most
// MaxRate a second, at once for a stop request (someone just pressed
// Ctrl-C and should see that it worked) and for a warning (printed above
// the frame, where it stays), and the final table at the end.
func (v *view) Handle(ev event.Event) {
	v.state.apply(ev)
	now := v.state.Now
	if v.opts.Now != nil {
		now = max(now, v.opts.Now())
	}
	v.state.Now = now
	v.above = append(v.above, aboveLines(ev, &v.state, v.width(), v.opts.Color)...)
	switch {
	case ev.Kind == event.RunFinished:
		v.finish(ev.Run)
	case ev.Kind == event.Stopping, ev.Kind == event.Warning, !v.drawn, now-v.lastDraw >= v.interval:
		v.draw(now)
	}
}

// columns is the terminal's width in cells.
func (v *view) columns() int {
	if v.opts.Width != nil {
		if w := v.opts.Width(); w >= 20 {
			return w
		}
	}
	return 80
}

// width is how wide frames are drawn: one cell short of the terminal, as a
// line that fills the last column leaves some terminals waiting to wrap,
// and the next cursor move is off by one.
func (v *view) width() int { return v.columns() - 1 }

func (v *view) height() int {
	if v.opts.Height == nil {
		return 0
	}
	if h := v.opts.Height(); h > 1 {
		return h - 1 // keep the cursor's line on screen
	}
	return 0
}

// draw replaces the live area with a frame.
func (v *view) draw(now time.Duration) {
	if v.err != nil {
		return
	}
	v.write(renderFit(v.state, v.width(), v.height(), v.opts.Color), true)
	v.drawn, v.lastDraw = true, now
}

// finish replaces the live area with the final table, which stays.
func (v *view) finish(run *report.Report) {
	if v.err != nil {
		return
	}
	v.write(renderFinal(run, v.width(), v.opts.Color), false)
	v.drawn = false
}

// write replaces the lines on screen with new ones (even none clears the
// area), after the lines waiting in above, which stay; live says whether
// the next write replaces the new lines in turn.
func (v *view) write(lines []string, live bool) {
	v.backToTop()
	for _, l := range v.above {
		v.out.WriteString(l)
		v.out.WriteString("\n")
	}
	v.above = v.above[:0]
	for _, l := range lines {
		v.out.WriteString(l)
		v.out.WriteString("\n")
	}
	v.flush(0)
	v.shown = v.shown[:0]
	if live {
		for _, l := range lines {
			v.shown = append(v.shown, visibleWidth(l))
		}
	}
}

// backToTop starts the next flush at the top of the lines on screen, with
// everything from there down cleared: cupwriter queues that move when
// flushing, so it is queued here, just before the frame, sized to the
// screen as it is now rather than as it was when the old lines were drawn.
func (v *view) backToTop() {
	rows := rowsTaken(v.shown, v.columns())
	if rows == 0 {
		return
	}
	// The terminal echoes keys typed between frames, ^C above all, and
	// leaves the cursor after them; the move up keeps the column. Without
	// the carriage return the frame starts two cells in, its widest line
	// wraps, and from then on every move up falls a row short, leaving a
	// stale line above the live area.
	v.out.WriteString("\r")
	v.flush(rows)
}

// flush writes what is buffered and queues a move up by rows, which the
// next flush sends first; it keeps the first error.
func (v *view) flush(rows int) {
	if err := v.out.Flush(rows); err != nil && v.err == nil {
		v.err = err
	}
}

// rowsTaken is how many terminal rows lines of these cell widths take in
// a terminal cols wide. After the terminal narrows, lines drawn for the
// old width wrap (tmux, VTE, kitty, iTerm2 and Windows Terminal rewrap
// them), and the move back up must cover every row they now take. On a
// terminal that cuts them instead (xterm), the move overshoots once and
// clears a few rows above the live area: the lesser harm, as an undershoot
// leaves stale rows that no later frame clears.
func rowsTaken(widths []int, cols int) int {
	rows := 0
	for _, w := range widths {
		rows += max(1, (w+cols-1)/cols)
	}
	return rows
}

// Close leaves the screen as it is: after RunFinished the table is there;
// after an interrupt the last frame stays as the record of where builds
// were. It reports the first write error.
func (v *view) Close() error {
	return v.err
}
