package terminal

import (
	"fmt"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"

	"github.com/trt-action/trt-action/internal/text"
)

// stopHint is what the live area shows once the run is stopping gracefully;
// shortStopHint says the same where stopHint does not fit, because a hint
// cut short would hide what the second Ctrl-C does.
const (
	stopHint      = "stopping… (Ctrl-C again to kill)"
	shortStopHint = "stopping… ^C again kills"
)

// renderFit is renderState for a terminal height lines tall: when the frame is
// taller, it collapses finished builds into one line, then shows fewer
// phase levels, then fewer running builds. A height of 0 or less means no
// limit. A live area taller than the screen cannot be redrawn in place.
func renderFit(s runState, width, height int, color bool) []string {
	l := all
	lines := l.render(s, width, color)
	if height <= 0 || len(lines) <= height {
		return lines
	}
	l.collapseFinished = true
	for l.maxDepth = deepestChain(s); l.maxDepth >= 0; l.maxDepth-- {
		if lines = l.render(s, width, color); len(lines) <= height {
			return lines
		}
	}
	l.maxDepth = 0
	for l.maxRunning = runningCount(s) - 1; l.maxRunning >= 0; l.maxRunning-- {
		if lines = l.render(s, width, color); len(lines) <= height {
			return lines
		}
	}
	if s.Stopping && height > 1 {
		// The stop hint is the line someone who pressed Ctrl-C looks for.
		return append(lines[:height-1:height-1], lines[len(lines)-1])
	}
	return lines[:height]
}

// layout says how much of the state a frame shows.
type layout struct {
	collapseFinished bool // one summary line for all finished builds
	maxDepth         int  // phase levels shown per build; -1 for all
	maxRunning       int  // running builds shown; -1 for all
}

// all shows everything.
var all = layout{maxDepth: -1, maxRunning: -1}

func (l layout) render(s runState, w int, color bool) []string {
	var lines []string
	if l.collapseFinished {
		if len(s.Finished) > 0 {
			lines = append(lines, line(finishedSummary(s), w, color))
		}
	} else {
		for _, i := range s.Finished {
			lines = append(lines, line(resultLine(s.Builds[i].Result), w, color))
		}
	}
	shown, hidden := 0, 0
	for i := range s.Builds {
		b := &s.Builds[i]
		if !b.running() {
			continue
		}
		if l.maxRunning >= 0 && shown >= l.maxRunning {
			hidden++
			continue
		}
		shown++
		lines = append(lines, line(header(s, b), w, color))
		for depth, p := range visibleChain(b, l.maxDepth) {
			lines = append(lines, line(phaseLine(s, b, p, depth, w), w, color))
		}
	}
	if hidden > 0 {
		lines = append(lines, line([]seg{{text: fmt.Sprintf("… %d more running", hidden), style: dim}}, w, color))
	}
	for i := range s.Builds {
		if b := &s.Builds[i]; b.pushing() {
			lines = append(lines, line(pushLine(b), w, color))
		}
	}
	if n := waiting(s); n > 0 {
		lines = append(lines, line([]seg{{text: fmt.Sprintf("○ %d waiting", n), style: dim}}, w, color))
	}
	if s.Stopping {
		lines = append(lines, line(stopLine(s, w), w, color))
	}
	return lines
}

// stopLine shows that the run is stopping and what a second Ctrl-C does,
// then why it stops (the supervisor's message) in the room left.
func stopLine(s runState, w int) []seg {
	hint := "■ " + stopHint
	if width(hint) > w {
		hint = "■ " + shortStopHint
	}
	segs := []seg{{text: hint, style: yellow}}
	// A reason cut to a few cells ("SIGIN…") says nothing; leave it out.
	const minReason = 10
	if why := stopReason(s.StopMessage); why != "" && w-width(hint) > minReason {
		segs = append(segs, seg{text: " " + why, style: dim, flex: true})
	}
	return segs
}

// stopReason is the supervisor's stop message without the clauses that
// say what Ctrl-C does: the hint beside it says that already, and the
// message says it for views that have no hint.
func stopReason(msg string) string {
	var keep []string
	for _, clause := range strings.Split(text.Line(msg), "; ") {
		if !strings.Contains(clause, "Ctrl-C") {
			keep = append(keep, clause)
		}
	}
	return strings.Join(keep, "; ")
}

func visibleChain(b *buildState, maxDepth int) []event.ActivePhase {
	if maxDepth >= 0 && len(b.Beat.Active) > maxDepth {
		return b.Beat.Active[:maxDepth]
	}
	return b.Beat.Active
}

// drift is how long ago the build's heartbeat was: elapsed times move on
// between heartbeats so the clock on screen does not stutter.
func drift(s runState, b *buildState) time.Duration { return max(0, s.Now-b.BeatAt) }

// budgetStyle colours a build by its nearest budget: red once it has run
// out, yellow after the supervisor warned about it.
func budgetStyle(s runState, b *buildState) style {
	switch {
	case b.Beat.BudgetLeft >= 0 && b.Beat.BudgetLeft-drift(s, b) <= 0:
		return red
	case b.Warned:
		return yellow
	}
	return plain
}

func header(s runState, b *buildState) []seg {
	elapsed := s.Now - b.StartedAt
	segs := []seg{
		{text: "▶ ", style: cyan},
		{text: text.Line(b.Name), style: bold, flex: true},
		{text: " " + text.Duration(elapsed)},
	}
	if inner, more := innerText(b); inner != "" {
		segs = append(segs, seg{text: " · " + inner, drop: 2}, seg{text: more, drop: 4})
	}
	if t := b.Transfer; t != nil { // a pull: the engine comes from the shared store
		segs = append(segs, transferSegs(t)...)
	}
	if b.Stopping {
		segs = append(segs, seg{text: " · stopping", style: yellow})
	}
	if b.Beat.BudgetLeft >= 0 {
		left := b.Beat.BudgetLeft - drift(s, b)
		budget := " · " + text.Duration(left) + " left"
		if left <= 0 {
			budget = " · over budget"
		}
		segs = append(segs, seg{text: budget, style: budgetStyle(s, b), drop: 3})
		if b.Beat.BudgetName != "" {
			segs = append(segs, seg{text: " (" + text.Line(b.Beat.BudgetName) + ")", style: dim, drop: 5})
		}
	}
	segs = append(segs, memorySegs(b.Beat.Memory)...)
	if eta := etaText(s, b, elapsed); eta != "" {
		segs = append(segs, seg{text: " · " + eta, drop: 4})
	}
	return segs
}

// memorySegs are a running build's memory on its line: " · mem 3.2 GB
// (peak 4.1 GB) · gpu 1.5 GB"; a narrow terminal loses the GPU and the
// peak first. None before the first look at the build's processes.
func memorySegs(m *event.MemoryUse) []seg {
	if m == nil {
		return nil
	}
	segs := []seg{{text: " · mem " + text.Bytes(m.Host), drop: 4}}
	if m.PeakHost > m.Host {
		segs = append(segs, seg{text: " (peak " + text.Bytes(m.PeakHost) + ")", style: dim, drop: 5})
	}
	if m.HasGPU {
		segs = append(segs, seg{text: " · gpu " + text.Bytes(m.GPU), drop: 5})
	}
	return segs
}

// transferSegs are a transfer's bytes, rate and time left, on its build's
// line: " · ⇣ 437.8 MB/1.2 GB · 87.6 MB/s · 9.1s left". A narrow terminal
// loses the time left first, then the rate, then the total.
func transferSegs(t *event.Transfer) []seg {
	return append([]seg{{text: " · " + report.TransferArrow(t.Direction), style: cyan}}, transferFigures(t)...)
}

// transferFigures are transferSegs without the arrow: " 437.8 MB/1.2 GB
// · 87.6 MB/s · 9.1s left".
func transferFigures(t *event.Transfer) []seg {
	segs := []seg{{text: " " + text.Bytes(t.Bytes), style: cyan}}
	if t.Total > 0 {
		segs = append(segs, seg{text: "/" + text.Bytes(t.Total), style: cyan, drop: 3})
	}
	if t.Elapsed > 0 {
		segs = append(segs, seg{text: " · " + text.Rate(t.Bytes, t.Elapsed), drop: 4})
	}
	if left, ok := report.TransferLeft(t.Bytes, t.Total, t.Elapsed); ok {
		segs = append(segs, seg{text: " · " + text.Duration(left) + " left", drop: 5})
	}
	return segs
}

// pushLine is a finished build whose push to the shared store goes on:
// "⇡ yolo_v8 pushing 21.0 MB/48.0 MB · 20.9 MB/s · 1.3s left".
func pushLine(b *buildState) []seg {
	segs := []seg{{text: report.TransferArrow(b.Transfer.Direction) + " ", style: cyan}, {text: text.Line(b.Name), flex: true}, {text: " pushing", style: dim}}
	return append(segs, transferFigures(b.Transfer)...)
}

// innerText is where a script build is among the TensorRT builds it runs
// (the bars below are that build's phases), and what may go first on a
// narrow terminal (report.InnerProgress).
func innerText(b *buildState) (inner, more string) {
	return report.InnerProgress(b.Beat.Inner, b.Beat.InnerRunning, b.Beat.InnerDone, b.Script)
}

// etaText is the build's estimate, or "" where there is none to give. A
// script build's rests on its baseline only: its phases are one TensorRT
// build's, which says nothing of the rest of the command.
func etaText(s runState, b *buildState, elapsed time.Duration) string {
	active := append([]event.ActivePhase(nil), b.Beat.Active...)
	if b.Script || b.Beat.Inner > 0 {
		active = nil
	}
	if len(active) > 0 {
		active[0].Elapsed += drift(s, b)
	}
	e := estimateLeft(s.Baseline[b.Name], elapsed, active)
	switch {
	case e.Source == etaBaseline && e.Overdue > 0:
		return "overdue " + text.Duration(e.Overdue)
	case e.Source == etaBaseline:
		return "ETA " + text.Duration(e.Left)
	case e.Source == etaProgress:
		return "ETA ~" + text.Duration(e.Left)
	}
	return ""
}

// barWidth suits the bar to the terminal so names keep most of the room.
func barWidth(w int) int {
	switch {
	case w >= 100:
		return 20
	case w >= 60:
		return 12
	default:
		return 6
	}
}

// indentWidth is the indent per phase level; deep TensorRT chains (up to 8
// levels) would push names off a narrow terminal at two cells a level.
func indentWidth(w int) int {
	if w >= 60 {
		return 2
	}
	return 1
}

func phaseLine(s runState, b *buildState, p event.ActivePhase, depth, w int) []seg {
	return []seg{
		{text: strings.Repeat(" ", (depth+1)*indentWidth(w))},
		// Narrow terminals lose the elapsed time first, then the name gives
		// up cells (down to 12), then the step count, then the bar.
		{text: bar(p.Done, p.Steps, barWidth(w)) + " ", style: barStyle(s, b), drop: 2},
		{text: text.Line(p.Name), flex: true, drop: 4, min: 12},
		{text: fmt.Sprintf(" %d/%d", min(p.Done, p.Steps), p.Steps), drop: 3},
		{text: " " + text.Duration(p.Elapsed+drift(s, b)), style: dim, drop: 5},
	}
}

func barStyle(s runState, b *buildState) style {
	if st := budgetStyle(s, b); st != plain {
		return st
	}
	return cyan
}

// bar draws done of steps as a bar n cells wide.
func bar(done, steps, n int) string {
	filled := 0
	if steps > 0 {
		filled = min(n, max(0, done*n/steps))
	}
	return strings.Repeat("█", filled) + strings.Repeat("░", n-filled)
}

func resultLine(r *report.Build) []seg {
	mark, st := "✔ ", green
	if !report.Succeeded(r.Status) {
		mark, st = "✖ ", red
	}
	segs := []seg{
		{text: mark, style: st},
		{text: text.Line(r.Name), flex: true},
		{text: " " + r.Status, style: st},
		{text: " " + text.DurationMs(r.DurationMs), style: dim, drop: 1},
	}
	if peak := report.MemoryPeakText(r.Memory); peak != "" {
		segs = append(segs, seg{text: " · " + peak, style: dim, drop: 2})
	}
	return segs
}

// finishedSummary stands for all finished builds when the screen is short:
// "✔ 18 ok  ✖ 2 failed", or "✔ 10 ok, 8 cached  ✖ 2 not ok".
func finishedSummary(s runState) []seg {
	ok, cached, failed := 0, 0, 0
	for _, i := range s.Finished {
		switch s.Builds[i].Result.Status {
		case report.StatusOK:
			ok++
		case report.StatusCached:
			cached++
		default:
			failed++
		}
	}
	done := fmt.Sprintf("✔ %d ok", ok)
	if cached > 0 {
		done += fmt.Sprintf(", %d cached", cached)
	}
	segs := []seg{{text: done, style: green}}
	if failed > 0 {
		segs = append(segs, seg{text: fmt.Sprintf("  ✖ %d not ok", failed), style: red})
	}
	return segs
}

func waiting(s runState) int {
	started := 0
	for i := range s.Builds {
		if s.Builds[i].Started || s.Builds[i].Result != nil {
			started++
		}
	}
	return max(0, s.Total-started)
}

func runningCount(s runState) int {
	n := 0
	for i := range s.Builds {
		if s.Builds[i].running() {
			n++
		}
	}
	return n
}

func deepestChain(s runState) int {
	d := 0
	for i := range s.Builds {
		if s.Builds[i].running() {
			d = max(d, len(s.Builds[i].Beat.Active))
		}
	}
	return d
}

// warningLines shows a warning (event.Warning: something the run worked
// around, such as a corrupt engine cache entry) as lines printed once
// above the live area, where they stay: "⚠ build: message", wrapped at
// width cells rather than cut, as its end is often what to do. A warning
// about the whole run (Build -1) has no name.
func warningLines(ev event.Event, w int, color bool) []string {
	head := []seg{{text: "⚠ ", style: yellow}}
	if ev.Build >= 0 && ev.Name != "" {
		head = append(head, seg{text: text.Line(ev.Name) + ": ", style: bold})
	}
	return wrapped(head, ev.Message, w, color)
}

// wrapped is head and then msg, text the run does not control, wrapped
// at w cells: the lines printed once above the live area, where they stay.
func wrapped(head []seg, msg string, w int, color bool) []string {
	const indent = "  "
	first := max(w-total(head), 1)
	rows := wrapCells(text.Line(msg), first, max(w-len(indent), 1))
	lines := []string{line(append(head, seg{text: rows[0]}), w, color)}
	for _, r := range rows[1:] {
		lines = append(lines, line([]seg{{text: indent + r}}, w, color))
	}
	return lines
}

// aboveLines are the lines an event prints above the live area, where
// they stay: a warning; a line a script build's command printed (the first
// report.LiveOutputLines of them, then a note, and when the build ends the
// last ones); the end of a TensorRT build inside it. s holds the event
// applied.
func aboveLines(ev event.Event, s *runState, w int, color bool) []string {
	switch ev.Kind {
	case event.Warning:
		return warningLines(ev, w, color)
	case event.Output:
		b := s.build(ev.Build)
		switch {
		case b.Output <= report.LiveOutputLines:
			return outputLine(b.Name, report.OutputLine(ev.Message), w, color)
		case b.Output == report.LiveOutputLines+1:
			return outputLine(b.Name, report.OutputCutNote(), w, color)
		}
	case event.InnerFinished:
		if ev.InnerResult == nil {
			return nil
		}
		st := green
		if !report.Succeeded(ev.InnerResult.Status) {
			st = red
		}
		head := []seg{{text: report.Mark(ev.InnerResult.Status) + " ", style: st}, {text: text.Line(s.build(ev.Build).Name) + ": ", style: bold}}
		return wrapped(head, report.InnerText(ev.InnerResult), w, color)
	case event.BuildFinished:
		if ev.Result != nil {
			return elidedOutput(s.build(ev.Build), ev.Result.Script, w, color)
		}
	}
	return nil
}

// outputLine is one line of a build's output: "name │ line".
func outputLine(name, msg string, w int, color bool) []string {
	return wrapped([]seg{{text: text.Line(name) + " │ ", style: dim}}, msg, w, color)
}

// elidedOutput is, for a build whose output went past what was shown as
// it came, how many lines were left out and the last of them.
func elidedOutput(b *buildState, sc *report.Script, w int, color bool) []string {
	var lines []string
	for _, l := range report.ElidedOutput(sc, b.Output) {
		lines = append(lines, outputLine(b.Name, l, w, color)...)
	}
	return lines
}
