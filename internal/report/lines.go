package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/actions"

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
}

func (o PlainOptions) withDefaults() PlainOptions {
	if o.Interval <= 0 {
		o.Interval = time.Second
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
	start     time.Duration // ev.At of BuildStarted
	lastBeat  time.Duration
	beaten    bool
	progress  *Progress // latest heartbeat, for status lines
	finished  bool
	startedAt int // order of BuildStarted, for stable status lines
}

func newLiner(opts PlainOptions) *liner {
	return &liner{opts: opts.withDefaults(), builds: map[int]*buildLines{}}
}

func (l *liner) build(ev Event) *buildLines {
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
func (l *liner) lines(ev Event) []string {
	var out []string
	for _, s := range l.rawLines(ev) {
		out = append(out, actions.Neutralise(text.Line(s)))
	}
	return out
}

func (l *liner) rawLines(ev Event) []string {
	switch ev.Kind {
	case RunStarted:
		return []string{"▶ " + text.Count(ev.Total, "build")}
	case RunFinished:
		if ev.Run == nil {
			return nil
		}
		return []string{"■ " + Headline(ev.Run)}
	case Stopping:
		if ev.Build < 0 {
			return []string{"■ stopping: " + ev.Message}
		}
	case BudgetWarning, Warning:
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
	case BuildStarted:
		return []string{prefix(0) + "started"}
	case PhaseStarted:
		if len(ev.Path) == 0 || len(ev.Path) > l.opts.Depth {
			return nil
		}
		return []string{prefix(since) + indent(ev.Path) + "┌ " + leaf(ev.Path) + stepsNote(ev.Steps)}
	case PhaseFinished:
		if len(ev.Path) == 0 || len(ev.Path) > l.opts.Depth {
			return nil
		}
		return []string{prefix(since) + indent(ev.Path) + "└ " + leaf(ev.Path) +
			fmt.Sprintf(" %d/%d in %s", ev.Done, ev.Steps, text.Duration(ev.Elapsed))}
	case Heartbeat:
		if ev.Progress == nil {
			return nil
		}
		b.progress = ev.Progress
		if b.beaten && ev.At-b.lastBeat < l.opts.Interval*9/10 {
			return nil
		}
		b.beaten, b.lastBeat = true, ev.At
		return []string{prefix(ev.Progress.Elapsed) + progressText(ev.Progress)}
	case BudgetWarning, Warning:
		return []string{prefix(since) + "⚠ " + ev.Message}
	case LibraryLog:
		return []string{prefix(since) + "TensorRT " + ev.Severity + ": " + ev.Message}
	case Stopping:
		return []string{prefix(since) + "■ stopping: " + ev.Message}
	case BuildFinished:
		b.finished = true
		if ev.Result == nil {
			return []string{fmt.Sprintf("[%s] finished", b.name)}
		}
		return []string{fmt.Sprintf("[%s] %s", b.name, resultText(ev.Result))}
	}
	return nil
}

func leaf(path []string) string { return path[len(path)-1] }

func indent(path []string) string { return strings.Repeat("  ", len(path)-1) }

func stepsNote(steps int) string {
	if steps == 1 {
		return " (1 step)"
	}
	return fmt.Sprintf(" (%d steps)", steps)
}

// progressText is "▸ A 3/6 › B 4/10 › C 1/3  (budget: 2m48s left)". Deep
// stacks keep the three outermost and the innermost phase.
func progressText(p *Progress) string {
	shown := p.Active
	elided := false
	if len(shown) > 4 {
		shown = append(append([]ActivePhase{}, p.Active[:3]...), p.Active[len(p.Active)-1])
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

// resultText is a build's outcome in one line:
// "✔ ok in 42.1s — engine out/resnet.engine (12.3 MB)" or
// "✖ budget-exceeded after 5m0s: phase "Timing tactics" over its 5m0s limit".
func resultText(b *Build) string {
	d := text.DurationMs(b.DurationMs)
	if Succeeded(b.Status) {
		text := "✔ " + b.Status + " in " + d
		if b.Engine != nil {
			text += fmt.Sprintf(" — engine %s (%s)", b.Engine.Path, fmtBytes(b.Engine.Bytes))
		}
		if origin := cacheOrigin(b, time.Time{}); b.Status == StatusCached && origin != "" {
			text += "; " + origin
		}
		return text
	}
	return "✖ " + b.Status + " after " + d + reasonSuffix(b)
}

// reasonSuffix is ": reason" from the build's reason or, without one, its
// budget hit.
func reasonSuffix(b *Build) string {
	reason := b.Reason
	if reason == "" && b.Budget != nil {
		reason = budgetText(b.Budget)
	}
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// budgetText says which limit ran out, e.g.
// `phase "Building engine/Timing tactics" ran 5m1s, over its 5m0s limit`.
func budgetText(h *BudgetHit) string {
	limit, ran := text.PreciseMs(h.LimitMs), text.PreciseMs(h.ElapsedMs)
	switch h.Kind {
	case "phase":
		return fmt.Sprintf("phase %q ran %s, over its %s limit", h.Phase, ran, limit)
	case "stall":
		return fmt.Sprintf("no progress for %s, over the %s stall limit", ran, limit)
	default:
		return fmt.Sprintf("%s ran %s, over its %s limit", h.Kind, ran, limit)
	}
}

// Headline is the run's outcome in one line, e.g. "✅ 5 of 5 builds ok in
// 42s", "❌ 1 failed, 1 over budget, 3 ok — 5 builds in 4m2s",
// "❌ run budget 1m exceeded: 1 over budget, 2 cancelled — 3 builds in 1m",
// "❌ 1 regression (resnet +41%), 2 ok — 2 builds in 9m",
// "✅ 12 ok, 8 cached — 20 builds in 14m3s" or
// "⏹ interrupted (SIGINT after 3m12s): 2 of 6 builds done — 2 ok".
func Headline(r *Report) string {
	count := map[string]int{}
	for i := range r.Builds {
		count[r.Builds[i].Status]++
	}
	total := len(r.Builds)
	done := total - count[StatusPending] - count[StatusRunning]
	var parts []string
	if reg := RegressionsText(r); reg != "" {
		parts = append(parts, reg) // it fails the run: first
	}
	labels := []struct{ status, label string }{
		{StatusCrashed, "crashed"}, {StatusKilled, "killed"}, {StatusFailed, "failed"},
		{StatusBudgetExceeded, "over budget"}, {StatusCancelled, "cancelled"}, {StatusOK, "ok"},
		{StatusCached, "cached"},
	}
	if r.Ended != "" { // finished, so these builds will never end
		labels = append(labels, struct{ status, label string }{StatusRunning, "never finished"},
			struct{ status, label string }{StatusPending, "never started"})
	}
	for _, s := range labels {
		if n := count[s.status]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s.label))
		}
	}
	outcome := strings.Join(parts, ", ")
	took := text.DurationMs(r.DurationMs)
	allOK := count[StatusOK]+count[StatusCached] == total && len(r.Regressions) == 0
	switch {
	case r.Interrupted != "":
		h := fmt.Sprintf("⏹ interrupted (%s): %d of %d builds done", r.Interrupted, done, total)
		if outcome != "" {
			h += " — " + outcome
		}
		return h
	case !r.Complete && r.Ended == "":
		return fmt.Sprintf("⏳ running: %d of %d builds done after %s", done, total, took)
	case total == 0:
		return "⚪ no builds ran"
	case r.Ended != "":
		icon := "❌"
		if allOK {
			icon = "✅"
		}
		return fmt.Sprintf("%s %s: %s — %s in %s", icon, r.Ended, outcome, text.Count(total, "build"), took)
	case allOK && count[StatusCached] > 0: // what was built and what the cache had
		return fmt.Sprintf("✅ %s — %s in %s", outcome, text.Count(total, "build"), took)
	case allOK:
		return fmt.Sprintf("✅ %d of %d builds ok in %s", total, total, took)
	default:
		return fmt.Sprintf("❌ %s — %s in %s", outcome, text.Count(total, "build"), took)
	}
}

// maxNamedRegressions bounds the builds a headline names.
const maxNamedRegressions = 3

// RegressionsText names the builds over the regression fail threshold, e.g.
// "2 regressions (resnet +41%, bert +30%)"; "" when there are none.
func RegressionsText(r *Report) string {
	if len(r.Regressions) == 0 {
		return ""
	}
	var named []string
	for _, g := range r.Regressions[:min(len(r.Regressions), maxNamedRegressions)] {
		named = append(named, fmt.Sprintf("%s %+.0f%%", g.Name, g.Percent))
	}
	if len(r.Regressions) > maxNamedRegressions {
		named = append(named, "…")
	}
	return fmt.Sprintf("%s (%s)", text.Count(len(r.Regressions), "regression"), strings.Join(named, ", "))
}
