// Package tui is the terminal view of a running build matrix: every running
// build with its active phases as nested bars, finished builds as one line
// each, and a table at the end.
//
// Frames are a pure function of State (Render, RenderFit, RenderFinal); the
// view only applies events to its State and decides when to draw. It owns
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
package tui

import (
	"io"
	"time"

	"github.com/vbauerster/cupwriter"

	"github.com/trt-action/trt-action/internal/eta"
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
	state    State
	drawn    bool          // a frame is on screen
	lastDraw time.Duration // run clock at the last frame
	err      error         // the first write error; drawing stops after it
}

// New returns the terminal view writing to w, which should be a terminal.
func New(w io.Writer, opts Options) report.View {
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
		state:    State{Baseline: eta.Baselines(opts.Baseline)},
	}
}

// Handle applies the event and draws a frame when one is due: at most
// MaxRate a second, at once for a stop request (someone just pressed
// Ctrl-C and should see that it worked), and the final table at the end.
func (v *view) Handle(ev report.Event) {
	v.state.Apply(ev)
	now := v.state.Now
	if v.opts.Now != nil {
		now = max(now, v.opts.Now())
	}
	v.state.Now = now
	switch {
	case ev.Kind == report.RunFinished:
		v.finish(ev.Run)
	case ev.Kind == report.Stopping, !v.drawn, now-v.lastDraw >= v.interval:
		v.draw(now)
	}
}

func (v *view) width() int {
	if v.opts.Width != nil {
		if w := v.opts.Width(); w >= 20 {
			// One cell short: a line that fills the last column leaves some
			// terminals waiting to wrap, and the next cursor move is off by one.
			return w - 1
		}
	}
	return 79
}

func (v *view) height() int {
	if v.opts.Height == nil {
		return 0
	}
	if h := v.opts.Height(); h > 1 {
		return h - 1 // keep the cursor's line on screen
	}
	return 0
}

// draw replaces the live area with a frame. cupwriter writes the frame and
// then queues the cursor move back to its top, so the next write (a frame
// or the final table) overwrites it.
func (v *view) draw(now time.Duration) {
	if v.err != nil {
		return
	}
	lines := RenderFit(v.state, v.width(), v.height(), v.opts.Color)
	v.write(lines, len(lines))
	v.drawn, v.lastDraw = true, now
}

// finish replaces the live area with the final table, which stays.
func (v *view) finish(run *report.Report) {
	if v.err != nil {
		return
	}
	v.write(RenderFinal(run, v.width(), v.opts.Color), 0)
	v.drawn = false
}

// write puts lines on screen; keep is how many of them the next write
// replaces. Flush first sends the queued move to the top of the previous
// frame (and clears below it), so even an empty write clears the area.
func (v *view) write(lines []string, keep int) {
	for _, l := range lines {
		v.out.WriteString(l)
		v.out.WriteString("\n")
	}
	v.err = v.out.Flush(keep)
}

// Close leaves the screen as it is: after RunFinished the table is there;
// after an interrupt the last frame stays as the record of where builds
// were. It reports the first write error.
func (v *view) Close() error {
	v.out.Reset() // drop the queued cursor move; nothing follows
	return v.err
}
