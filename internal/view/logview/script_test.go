package logview

import (
	"slices"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

// script is the event sequence of one build: phases, heartbeats every
// 400 ms (faster than the views' 1 s bound), and its end.
func script(idx int, b report.Build, start time.Duration) []event.Event {
	at := func(msOff int64) time.Duration { return start + ms(msOff) }
	ev := func(kind event.EventKind, off int64) event.Event {
		return event.Event{Kind: kind, At: at(off), Build: idx, Name: b.Name}
	}
	end := b.DurationMs
	out := []event.Event{ev(event.BuildStarted, 0)}
	phase := func(kind event.EventKind, off int64, path []string, done, steps int, elapsed int64) {
		e := ev(kind, off)
		e.Path, e.Done, e.Steps, e.Elapsed = path, done, steps, ms(elapsed)
		out = append(out, e)
	}
	root := []string{"Building engine"}
	opt := append(slices.Clone(root), "Optimizing graph")
	costs := append(slices.Clone(root), "Computing profile costs")
	timing := append(slices.Clone(costs), "Timing tactics")
	phase(event.PhaseStarted, 100, root, 0, 6, 0)
	phase(event.PhaseStarted, 200, opt, 0, 33, 0)
	phase(event.PhaseFinished, 4000, opt, 28, 33, 3800)
	phase(event.PhaseStarted, 4000, costs, 0, 10, 0)
	phase(event.PhaseStarted, 4100, timing, 0, 3, 0)
	for off := int64(300); off < end; off += 400 {
		e := ev(event.Heartbeat, off)
		e.Progress = progressAt(off, end)
		out = append(out, e)
	}
	if b.Status == report.StatusOK {
		phase(event.PhaseFinished, end-300, timing, 3, 3, end-4400)
		phase(event.PhaseFinished, end-200, costs, 10, 10, end-4200)
		phase(event.PhaseFinished, end-100, root, 6, 6, end-200)
	} else {
		w := ev(event.BudgetWarning, end/2)
		w.Message = "phase Timing tactics used 80% of its 10s budget"
		out = append(out, w)
		s := ev(event.Stopping, end-100)
		s.Message = b.Reason
		out = append(out, s)
	}
	out = slices.DeleteFunc(out, func(e event.Event) bool { return e.At >= at(end) }) // a short build ends early
	done := ev(event.BuildFinished, end)
	done.Result = &b
	out = append(out, done)
	slices.SortStableFunc(out, func(x, y event.Event) int { return int(x.At - y.At) })
	return out
}

func progressAt(off, end int64) *event.Progress {
	p := &event.Progress{Elapsed: ms(off), Callbacks: off * 3, BudgetLeft: ms(30_000 - off), BudgetName: "build"}
	p.Active = []event.ActivePhase{{Name: "Building engine", Done: 1, Steps: 6, Elapsed: ms(off - 100)}}
	if off < 4000 {
		p.Active = append(p.Active, event.ActivePhase{Name: "Optimizing graph", Done: int(off / 200), Steps: 33})
	} else {
		p.Active = append(p.Active,
			event.ActivePhase{Name: "Computing profile costs", Done: 4, Steps: 10},
			event.ActivePhase{Name: "Timing tactics", Done: 1, Steps: 3},
			event.ActivePhase{Name: "Timing graph nodes", Done: 5, Steps: 12},
			event.ActivePhase{Name: "Measuring tactic time", Done: 1, Steps: 4})
	}
	if off > end-2500 {
		p.Silent = ms(off - (end - 2500) + 10_000)
	}
	return p
}

// runScript is a whole run: event.RunStarted, the builds' scripts (sequential or
// overlapping) merged in time order, event.RunFinished.
func runScript(r *report.Report, parallel bool) []event.Event {
	events := []event.Event{{Kind: event.RunStarted, Build: -1, Total: len(r.Builds)}}
	var builds []event.Event
	var next time.Duration
	for i, b := range r.Builds {
		start := ms(b.StartMs)
		if !parallel {
			start = next
		}
		builds = append(builds, script(i, b, start)...)
		next = start + ms(b.DurationMs)
	}
	slices.SortStableFunc(builds, func(x, y event.Event) int { return int(x.At - y.At) })
	events = append(events, builds...)
	last := events[len(events)-1].At
	return append(events, event.Event{Kind: event.RunFinished, At: last, Build: -1, Run: r})
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
