package cli

import (
	"crypto/rand"
	"errors"
	"io"
	"time"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/view/jsonl"
	"github.com/trt-action/trt-action/internal/view/logview"
	"github.com/trt-action/trt-action/internal/view/terminal"
)

// viewSet sends each event to every view.
type viewSet struct {
	views  []event.View
	closer []func() error
}

func (v *viewSet) Handle(ev event.Event) {
	for _, view := range v.views {
		view.Handle(ev)
	}
}

func (v *viewSet) Close() error {
	var errs []error
	for _, view := range v.views {
		errs = append(errs, view.Close())
	}
	for _, c := range v.closer {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// views picks how the run is shown: a live view in a terminal, groups and
// fenced lines in GitHub Actions, bounded plain lines elsewhere; plus the
// event stream when asked for. It also says how often builds report progress.
func (c *Command) views(f buildFlags, baseline *report.Report) (*viewSet, time.Duration, error) {
	set := &viewSet{}
	heartbeat := time.Second
	human := c.Streams.Out
	if f.events == "-" {
		human = c.Streams.Err // the stream owns stdout
	}
	humanTTY := (f.events == "-" && c.Streams.ErrTTY) || (f.events != "-" && c.Streams.OutTTY)
	gha := c.actions()
	switch {
	case gha.InActions():
		fence, err := actions.NewFence(rand.Reader)
		if err != nil {
			return nil, 0, err
		}
		set.views = append(set.views, logview.NewActionsView(human, fence, logview.ActionsOptions{Jobs: f.jobs, File: f.file, Plain: logview.PlainOptions{Depth: f.depth}}))
	case humanTTY:
		heartbeat = 100 * time.Millisecond // the live view redraws at up to 10 frames a second
		size := c.Streams.OutSize
		if f.events == "-" {
			size = c.Streams.ErrSize
		}
		set.views = append(set.views, terminal.New(human, terminal.Options{
			Width:    func() int { w, _ := size(); return w },
			Height:   func() int { _, h := size(); return h },
			Color:    !f.noColor && !c.Streams.NoColor,
			Baseline: baseline,
		}))
	default:
		set.views = append(set.views, logview.NewPlainView(human, logview.PlainOptions{Depth: f.depth}))
	}
	if f.events != "" {
		// On stdout the stream may be the workflow log: keep it inert.
		var w io.Writer = actions.InertJSONWriter{W: c.Streams.Out}
		if f.events != "-" {
			file, err := atomicfile.Live(f.events)
			if err != nil {
				return nil, 0, usagef("--events: %v", err)
			}
			set.closer = append(set.closer, file.Close)
			w = file
		}
		set.views = append(set.views, jsonl.New(w, jsonl.Options{Depth: f.depth}))
	}
	return set, heartbeat, nil
}
