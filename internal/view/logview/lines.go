package logview

import (
	"fmt"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"

	"github.com/trt-action/trt-action/internal/text"
)

// PlainOptions bound the progress lines.
type PlainOptions struct {
	// Interval is the least time between two heartbeat lines of one build
	// (default 1s; lines 10% early still pass, so a 1 s heartbeat with
	// jitter is not halved).
	Interval time.Duration
	// Depth is the deepest phase with start and finish lines (default 2).
	Depth int
	// TransferEvery is the least time between two progress lines of one
	// transfer with the shared cache store (default 5s): a pull of
	// gigabytes says it is moving without filling the log.
	TransferEvery time.Duration
}

func (o PlainOptions) withDefaults() PlainOptions {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.TransferEvery <= 0 {
		o.TransferEvery = 5 * time.Second
	}
	if o.Depth <= 0 {
		o.Depth = 2
	}
	return o
}

// liner turns events into progress lines. It keeps per-build state (name,
// start, heartbeat rate) and is shared by the plain and Actions views.
type liner struct {
	opts   PlainOptions
	builds map[int]*buildLines
}

type buildLines struct {
	name      string
	start     time.Duration // ev.At of event.BuildStarted
	lastBeat  time.Duration
	beaten    bool
	progress  *event.Progress // latest heartbeat, for status lines
	finished  bool
	startedAt int // order of event.BuildStarted, for stable status lines
	// script is set once the build shows it runs a command (its output, a
	// TensorRT build inside it); output counts the lines it printed.
	script bool
	output int
	// transfers are the build's transfers with the shared store, by
	// direction: when each last had a line. transfer is the newest
	// progress of one still running, for the status lines.
	transfers map[string]*transferLines
	transfer  *event.Transfer
}

// transferLines is what the log has said of one transfer.
type transferLines struct {
	started  bool          // its first line is out
	lastLine time.Duration // ev.At of its last progress line
}

func newLiner(opts PlainOptions) *liner {
	return &liner{opts: opts.withDefaults(), builds: map[int]*buildLines{}}
}

func (l *liner) build(ev event.Event) *buildLines {
	b := l.builds[ev.Build]
	if b == nil {
		b = &buildLines{name: ev.Name, start: ev.At, startedAt: len(l.builds)}
		if b.name == "" {
			b.name = fmt.Sprintf("build %d", ev.Build+1)
		}
		l.builds[ev.Build] = b
	}
	return b
}

// lines returns the lines ev produces (possibly none). Every line is one
// line, neutralised, so it is inert even outside a fence.
func (l *liner) lines(ev event.Event) []string {
	var out []string
	for _, s := range l.rawLines(ev) {
		out = append(out, actions.Neutralise(text.Line(s)))
	}
	return out
}

func (l *liner) rawLines(ev event.Event) []string {
	switch ev.Kind {
	case event.RunStarted:
		return []string{"▶ " + text.Count(ev.Total, "build")}
	case event.RunFinished:
		if ev.Run == nil {
			return nil
		}
		return []string{"■ " + report.Headline(ev.Run)}
	case event.Stopping:
		if ev.Build < 0 {
			return []string{"■ stopping: " + ev.Message}
		}
	case event.BudgetWarning, event.Warning:
		if ev.Build < 0 {
			return []string{"⚠ " + ev.Message}
		}
	}
	if ev.Build < 0 {
		return nil
	}
	b := l.build(ev)
	prefix := func(elapsed time.Duration) string {
		return fmt.Sprintf("[%s] %8s  ", b.name, text.Duration(elapsed))
	}
	since := ev.At - b.start
	switch ev.Kind {
	case event.BuildStarted:
		return []string{prefix(0) + "started"}
	case event.PhaseStarted:
		if len(ev.Path) == 0 || len(ev.Path) > l.opts.Depth {
			return nil
		}
		return []string{prefix(since) + innerTag(ev.Inner) + indent(ev.Path) + "┌ " + leaf(ev.Path) + stepsNote(ev.Steps)}
	case event.PhaseFinished:
		if len(ev.Path) == 0 || len(ev.Path) > l.opts.Depth {
			return nil
		}
		return []string{prefix(since) + innerTag(ev.Inner) + indent(ev.Path) + "└ " + leaf(ev.Path) +
			fmt.Sprintf(" %d/%d in %s", ev.Done, ev.Steps, text.Duration(ev.Elapsed))}
	case event.Heartbeat:
		if ev.Progress == nil {
			return nil
		}
		b.progress = ev.Progress
		b.script = b.script || ev.Progress.Inner > 0 || ev.Progress.InnerDone > 0
		if b.beaten && ev.At-b.lastBeat < l.opts.Interval*9/10 {
			return nil
		}
		b.beaten, b.lastBeat = true, ev.At
		return []string{prefix(ev.Progress.Elapsed) + progressText(ev.Progress, b.script)}
	case event.BudgetWarning, event.Warning:
		return []string{prefix(since) + "⚠ " + ev.Message}
	case event.LibraryLog:
		return []string{prefix(since) + "TensorRT " + ev.Severity + ": " + ev.Message}
	case event.Stopping:
		return []string{prefix(since) + "■ stopping: " + ev.Message}
	case event.Output:
		b.script = true
		return b.outputLine(prefix(since), ev.Message)
	case event.InnerStarted:
		b.script = true
		return []string{prefix(since) + fmt.Sprintf("▶ TensorRT build %d started: %s", ev.Inner, ev.Message)}
	case event.InnerFinished:
		if ev.InnerResult == nil {
			return []string{prefix(since) + fmt.Sprintf("■ TensorRT build %d finished", ev.Inner)}
		}
		return []string{prefix(since) + report.Mark(ev.InnerResult.Status) + " " + report.InnerText(ev.InnerResult)}
	case event.CacheTransfer:
		return b.transferLines(prefix(since), ev, l.opts.TransferEvery)
	case event.CachePushed:
		if ev.Result == nil || ev.Result.Cache == nil {
			return nil
		}
		if ev.Result.Cache.Pushed {
			return []string{prefix(since) + report.TransferArrow(report.TransferPush) + " pushed to " + report.SharedCache}
		}
		return []string{prefix(since) + report.TransferArrow(report.TransferPush) + " not pushed to " + report.SharedCache}
	case event.BuildFinished:
		b.finished = true
		if ev.Result == nil {
			return []string{fmt.Sprintf("[%s] finished", b.name)}
		}
		return append(b.elidedOutput(prefix(since), ev.Result.Script), fmt.Sprintf("[%s] %s", b.name, resultText(ev.Result)))
	}
	return nil
}

// transferLines are the lines of one step of a transfer with the shared
// store: its start, then at most one progress line every `every`, and its
// end with size and rate (or why it stopped: the store's words, untrusted,
// made one inert line as every line is).
func (b *buildLines) transferLines(prefix string, ev event.Event, every time.Duration) []string {
	t := ev.Transfer
	if t == nil {
		return nil
	}
	if b.transfers == nil {
		b.transfers = map[string]*transferLines{}
	}
	tl := b.transfers[t.Direction]
	if tl == nil {
		tl = &transferLines{}
		b.transfers[t.Direction] = tl
	}
	arrow := report.TransferArrow(t.Direction) + " "
	if t.Ended {
		delete(b.transfers, t.Direction) // a later transfer is a new one
		b.transfer = nil
		return []string{prefix + arrow + report.TransferEnd(t.Direction, t.Bytes, t.Elapsed, t.Err)}
	}
	b.transfer = t
	switch {
	case !tl.started:
		tl.started, tl.lastLine = true, ev.At
		return []string{prefix + arrow + report.TransferStart(t.Direction, t.Total)}
	case ev.At-tl.lastLine >= every:
		tl.lastLine = ev.At
		return []string{prefix + arrow + report.TransferProgress(t.Bytes, t.Total, t.Elapsed)}
	}
	return nil
}

// outputLine is one line the build's command printed, as the first
// report.LiveOutputLines come; then one line saying the rest shows when
// the build ends.
func (b *buildLines) outputLine(prefix, line string) []string {
	b.output++
	switch {
	case b.output <= report.LiveOutputLines:
		return []string{prefix + "│ " + report.OutputLine(line)}
	case b.output == report.LiveOutputLines+1:
		return []string{prefix + "│ " + report.OutputCutNote()}
	}
	return nil
}

// elidedOutput is, for a build whose output went past what was shown as
// it came, how many lines were left out and the last of them.
func (b *buildLines) elidedOutput(prefix string, s *report.Script) []string {
	var lines []string
	for _, l := range report.ElidedOutput(s, b.output) {
		lines = append(lines, prefix+"│ "+l)
	}
	return lines
}

// mark is ✔ for a status that succeeded, ✖ for the rest.

func leaf(path []string) string { return path[len(path)-1] }

// innerTag marks the phase lines of TensorRT build k of a script build,
// "#2 ", so the phases of builds that run at once stay apart.
func innerTag(k int) string {
	if k <= 0 {
		return ""
	}
	return fmt.Sprintf("#%d ", k)
}

func indent(path []string) string { return strings.Repeat("  ", len(path)-1) }

func stepsNote(steps int) string {
	if steps == 1 {
		return " (1 step)"
	}
	return fmt.Sprintf(" (%d steps)", steps)
}

// progressText is "▸ A 3/6 › B 4/10 › C 1/3  (budget: 2m48s left)", and
// for a script build "▸ TensorRT build 2 of 2 so far: A 3/6 › …". Deep
// stacks keep the three outermost and the innermost phase.
func progressText(p *event.Progress, script bool) string {
	shown := p.Active
	elided := false
	if len(shown) > 4 {
		shown = append(append([]event.ActivePhase{}, p.Active[:3]...), p.Active[len(p.Active)-1])
		elided = true
	}
	var parts []string
	for i, a := range shown {
		if elided && i == 3 {
			parts = append(parts, "…")
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d", a.Name, a.Done, a.Steps))
	}
	line := "▸ starting"
	if len(parts) > 0 {
		line = "▸ " + strings.Join(parts, " › ")
	}
	if inner := innerProgress(p, script); inner != "" {
		line = "▸ " + inner
		if len(parts) > 0 {
			line += ": " + strings.Join(parts, " › ")
		}
	}
	var notes []string
	if p.BudgetLeft >= 0 {
		note := "budget: " + text.Duration(p.BudgetLeft) + " left"
		if p.BudgetName != "" && p.BudgetName != "build" {
			note += " (" + p.BudgetName + ")"
		}
		notes = append(notes, note)
	}
	if p.Silent >= 10*time.Second {
		notes = append(notes, "no callback for "+text.Duration(p.Silent))
	}
	if len(notes) > 0 {
		line += "  (" + strings.Join(notes, ", ") + ")"
	}
	return line
}

// innerProgress is where a script build is among the TensorRT builds it
// runs: "TensorRT build 2 of 2 so far" (the phases shown are its), or
// between them "running the command, 1 TensorRT build done"; "" for a
// build that runs no command.
func innerProgress(p *event.Progress, script bool) string {
	words, more := report.InnerProgress(p.Inner, p.InnerRunning, p.InnerDone, script)
	return words + more
}

// resultText is a build's outcome in one line:
// "✔ ok in 42.1s — engine out/resnet.engine (12.3 MB); stored in the cache",
// "✖ budget-exceeded after 5m0s: phase "Timing tactics" over its 5m0s limit",
// or for a script build "✔ ok in 3.1s — exit 0 · 1 TensorRT build — engine …".
func resultText(b *report.Build) string {
	d := text.DurationMs(b.DurationMs)
	if peak := report.MemoryPeakText(b.Memory); peak != "" {
		d += " · " + peak
	}
	script := ""
	if note := report.ScriptNote(b); note != "" {
		script = " — " + note
	}
	if report.Succeeded(b.Status) {
		line := "✔ " + b.Status + " in " + d + script
		if engines := report.EngineFiles(b); len(engines) > 0 {
			line += " — " + enginesText(engines)
		}
		if origin := report.CacheOrigin(b, time.Time{}); origin != "" {
			line += "; " + origin
		}
		if note := report.CacheStoreNote(b); note != "" {
			line += "; " + note
		}
		return line
	}
	return "✖ " + b.Status + " after " + d + report.ReasonSuffix(b) + script
}

// enginesText names a build's engine files: "engine out/a.engine (12.3
// MB)", or for a script build's several "engines a (…), b (…) and 3 more".
func enginesText(engines []report.Engine) string {
	const named = 3
	var parts []string
	for _, e := range engines[:min(len(engines), named)] {
		parts = append(parts, fmt.Sprintf("%s (%s)", e.Path, text.Bytes(e.Bytes)))
	}
	if len(engines) == 1 {
		return "engine " + parts[0]
	}
	list := "engines " + strings.Join(parts, ", ")
	if more := len(engines) - named; more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return list
}
