package reporttest

import (
	"slices"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

// SharedStopped is why the Shared sample's transfer that stopped short
// did: vit-b16's push.
var SharedStopped = map[string]string{"vit-b16": "HTTP 503 Service Unavailable after 3 tries"}

// transferEvery is how often SharedEvents' transfers tell their progress,
// as the tier does (a few times a second).
const transferEvery = 250 * time.Millisecond

// SharedEvents is a run with a shared store as its views receive it, made
// from its report r (Shared, HostileShared): each build starts at its
// StartMs; a remote hit pulls for its transfer's time from its start, a
// push runs after the build has ended, each telling its progress every
// 250 ms and its end (stopped with stopped[name]'s words, as SharedStopped
// gives them), and a push's end is followed by event.CachePushed; each
// build's warnings come at its end. No phases: what these events test is
// the transfers.
func SharedEvents(r *report.Report, stopped map[string]string) []event.Event {
	events := []event.Event{{Kind: event.RunStarted, Build: -1, Total: len(r.Builds)}}
	var end time.Duration
	for i := range r.Builds {
		b := &r.Builds[i]
		start, took := time.Duration(b.StartMs)*time.Millisecond, time.Duration(b.DurationMs)*time.Millisecond
		ev := func(kind event.EventKind, at time.Duration) event.Event {
			return event.Event{Kind: kind, At: at, Build: i, Name: b.Name}
		}
		events = append(events, ev(event.BuildStarted, start))
		t := (*report.CacheTransfer)(nil)
		if b.Cache != nil {
			t = b.Cache.Transfer
		}
		finished := ev(event.BuildFinished, start+took)
		finished.Result = b
		warnings := func(at time.Duration) {
			for _, w := range b.Warnings {
				warn := ev(event.Warning, at)
				warn.Message = w
				events = append(events, warn)
			}
		}
		switch {
		case t == nil:
			warnings(start + took)
			events = append(events, finished)
		case t.Direction == report.TransferPull:
			events = append(events, transfer(ev, start, t, stopped[b.Name])...)
			warnings(start + took)
			events = append(events, finished)
		default:
			// The build ends before its push does: its entry then says
			// nothing of the push, and no warning of it yet.
			before := *b
			before.Warnings = nil
			before.Cache = new(*b.Cache)
			before.Cache.Pushed, before.Cache.Transfer = false, nil
			finished.Result = &before
			events = append(events, finished)
			pushed := transfer(ev, start+took, t, stopped[b.Name])
			events = append(events, pushed...)
			warnings(pushed[len(pushed)-1].At)
			last := ev(event.CachePushed, pushed[len(pushed)-1].At)
			last.Result = b
			events = append(events, last)
		}
		end = max(end, events[len(events)-1].At)
	}
	slices.SortStableFunc(events, func(x, y event.Event) int { return int(x.At - y.At) })
	return append(events, event.Event{Kind: event.RunFinished, At: end, Build: -1, Run: r})
}

// transfer is one transfer's events from start: its progress at an even
// rate, then its end (stopped short with why, when why is not "").
func transfer(ev func(event.EventKind, time.Duration) event.Event, start time.Duration, t *report.CacheTransfer, why string) []event.Event {
	took := time.Duration(t.Ms) * time.Millisecond
	total := t.Bytes
	if why != "" {
		total *= 4 // it stopped a quarter of the way
	}
	var out []event.Event
	for at := time.Duration(0); ; at += transferEvery {
		e := ev(event.CacheTransfer, start+min(at, took))
		e.Transfer = &event.Transfer{Direction: t.Direction, Bytes: int64(float64(t.Bytes) * float64(min(at, took)) / float64(max(took, 1))),
			Total: total, Elapsed: min(at, took)}
		if at >= took {
			e.Transfer.Bytes, e.Transfer.Ended, e.Transfer.Err = t.Bytes, true, why
			return append(out, e)
		}
		out = append(out, e)
	}
}
