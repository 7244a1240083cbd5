package logview

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"

	"github.com/trt-action/trt-action/internal/text"
)

// ActionsOptions configure the GitHub Actions view.
type ActionsOptions struct {
	Plain PlainOptions
	// Jobs is how many builds run at once. Above 1 their lines interleave
	// and groups cannot nest, so each build's lines are held back and
	// written as one group when it finishes.
	Jobs int
	// StatusEvery is the least time between status lines naming the running
	// builds while groups are held back (default 15s).
	StatusEvery time.Duration
	// Annotations is the step's annotation budget, shared with anything else
	// the step annotates; nil means a fresh actions.NewBudget(0).
	Annotations *actions.Budget
	// File is the matrix file the annotations point at ("" for none).
	File string
}

// ActionsView writes progress for a GitHub Actions log: a ::group:: per
// build, every line of uncontrolled text inside a stop-commands fence, and
// annotations for the builds that went wrong when the run finishes.
type ActionsView struct {
	out      emitter
	liner    *liner
	opts     ActionsOptions
	open     int              // build whose group is open and streaming, or -1
	held     map[int][]string // lines of builds whose group is not written yet
	done     []int            // held builds that finished while a group was open
	titles   map[int]string   // group titles of finished held builds
	status   time.Duration    // when the last status line was written
	warnings []actions.Note   // budget warnings, annotated at the end
	// late holds lines of builds that had ended (a push to the shared
	// store that went on after its build) while another build's group was
	// open: written when no group is open, never into another's group.
	late []string
}

// NewActionsView writes to w, fencing with fence.
func NewActionsView(w io.Writer, fence actions.Fence, opts ActionsOptions) *ActionsView {
	if opts.StatusEvery <= 0 {
		opts.StatusEvery = 15 * time.Second
	}
	if opts.Annotations == nil {
		opts.Annotations = actions.NewBudget(0)
	}
	return &ActionsView{
		out:    emitter{w: w, fence: fence},
		liner:  newLiner(opts.Plain),
		opts:   opts,
		open:   -1,
		held:   map[int][]string{},
		titles: map[int]string{},
	}
}

// Handle implements event.View.
func (v *ActionsView) Handle(ev event.Event) {
	ended := v.ended(ev.Build)
	lines := v.liner.lines(ev)
	switch {
	case ev.Kind == event.RunFinished:
		v.finishRun(ev, lines)
	case ev.Build < 0:
		v.out.text(lines...)
	case ended:
		v.writeLate(lines)
	case ev.Kind == event.BuildStarted && v.open < 0 && v.opts.Jobs <= 1 && len(v.held) == 0:
		v.open = ev.Build
		v.out.command(actions.Group(v.liner.builds[ev.Build].name))
		v.out.text(lines...)
	case ev.Build == v.open:
		v.out.text(lines...)
		if ev.Kind == event.BuildFinished {
			v.out.command(actions.EndGroup())
			v.out.text(lines...) // the outcome stays visible with the group collapsed
			v.open = -1
			v.writeDone()
			v.writeLate(nil)
		}
	default:
		v.hold(ev, lines)
	}
	if ev.Kind == event.BudgetWarning {
		v.noteWarning(ev)
	}
	v.writeStatus(ev.At)
	v.out.flush()
}

// ended reports whether build i has ended (its BuildFinished is out):
// what it says now (a push that outlived it) belongs to no group.
func (v *ActionsView) ended(i int) bool {
	b := v.liner.builds[i]
	return i >= 0 && b != nil && b.finished
}

// writeLate writes lines of builds that have ended, with those kept
// while a group was open, once none is.
func (v *ActionsView) writeLate(lines []string) {
	v.late = append(v.late, lines...)
	if v.open >= 0 || len(v.late) == 0 {
		return
	}
	v.out.text(v.late...)
	v.late = v.late[:0]
}

// hold keeps a build's lines for its group; warnings and stops also show
// at once, since they may matter before the build ends.
func (v *ActionsView) hold(ev event.Event, lines []string) {
	v.held[ev.Build] = append(v.held[ev.Build], lines...)
	if (ev.Kind == event.BudgetWarning || ev.Kind == event.Stopping) && v.open < 0 {
		v.out.text(lines...)
	}
	if ev.Kind != event.BuildFinished {
		return
	}
	v.titles[ev.Build] = groupTitle(v.liner.builds[ev.Build].name, ev.Result)
	v.done = append(v.done, ev.Build)
	if v.open < 0 {
		v.writeDone()
	}
}

func (v *ActionsView) writeDone() {
	for _, b := range v.done {
		v.writeGroup(b, v.titles[b])
	}
	v.done = v.done[:0]
}

func (v *ActionsView) writeGroup(b int, title string) {
	v.out.command(actions.Group(title))
	v.out.text(v.held[b]...)
	v.out.command(actions.EndGroup())
	delete(v.held, b)
	delete(v.titles, b)
}

func groupTitle(name string, result *report.Build) string {
	switch {
	case result == nil:
		return name + " — finished"
	case report.Succeeded(result.Status):
		return fmt.Sprintf("✔ %s — %s in %s", name, result.Status, text.DurationMs(result.DurationMs))
	default:
		return fmt.Sprintf("✖ %s — %s after %s", name, result.Status, text.DurationMs(result.DurationMs))
	}
}

// writeStatus names the held builds still running, at most every
// StatusEvery, so a long parallel run does not look stuck.
func (v *ActionsView) writeStatus(at time.Duration) {
	if v.open >= 0 || at-v.status < v.opts.StatusEvery {
		return
	}
	running := v.runningHeld()
	if len(running) == 0 {
		return
	}
	v.status = at
	const shown = 8
	var parts []string
	for _, b := range running[:min(len(running), shown)] {
		parts = append(parts, buildStatus(b))
	}
	if len(running) > shown {
		parts = append(parts, fmt.Sprintf("and %d more", len(running)-shown))
	}
	line := fmt.Sprintf("⏳ %s: %d running — %s", text.Duration(at), len(running), strings.Join(parts, "; "))
	v.out.text(actions.Neutralise(text.Line(line)))
}

func (v *ActionsView) runningHeld() []*buildLines {
	var running []*buildLines
	for b := range v.held {
		if st := v.liner.builds[b]; st != nil && !st.finished {
			running = append(running, st)
		}
	}
	slices.SortFunc(running, func(x, y *buildLines) int { return x.startedAt - y.startedAt })
	return running
}

func buildStatus(b *buildLines) string {
	if t := b.transfer; t != nil { // a pull from the shared store: no phase runs
		return b.name + " " + report.TransferArrow(t.Direction) + " " + report.TransferProgress(t.Bytes, t.Total, t.Elapsed)
	}
	p := b.progress
	if p == nil {
		return b.name + " starting"
	}
	text := b.name + " " + text.Duration(p.Elapsed)
	if inner := innerProgress(p, b.script); inner != "" {
		text += " " + inner
	}
	if len(p.Active) > 0 {
		a := p.Active[len(p.Active)-1]
		text += fmt.Sprintf(" %s %d/%d", a.Name, a.Done, a.Steps)
	}
	return text
}

func (v *ActionsView) noteWarning(ev event.Event) {
	const keep = 20 // the budget keeps few; more would only be dropped
	if len(v.warnings) >= keep {
		return
	}
	name := "run"
	if st := v.liner.builds[ev.Build]; ev.Build >= 0 && st != nil {
		name = st.name
	}
	v.warnings = append(v.warnings, actions.Note{
		Level: actions.LevelWarning, Title: budgetWarningTitle(name),
		Message: ev.Message, File: v.opts.File,
	})
}

// finishRun closes any group, writes every held build (those that never
// finished marked so), the headline, and the annotations.
func (v *ActionsView) finishRun(ev event.Event, lines []string) {
	if v.open >= 0 {
		v.out.command(actions.EndGroup())
		v.open = -1
	}
	v.writeDone()
	v.writeLate(nil)
	var unfinished []int
	for b := range v.held {
		unfinished = append(unfinished, b)
	}
	slices.Sort(unfinished)
	for _, b := range unfinished {
		v.writeGroup(b, "⏹ "+v.liner.builds[b].name+" — did not finish")
	}
	v.out.text(lines...)
	if ev.Run != nil {
		v.annotate(ev.Run)
	}
}

func (v *ActionsView) annotate(r *report.Report) {
	budget := v.opts.Annotations
	before := budget.Dropped()
	for _, n := range budget.Take(runNotes(r, v.warnings, v.opts.File)) {
		v.out.command(n.String())
	}
	if dropped := budget.Dropped() - before; dropped > 0 {
		msg := fmt.Sprintf("%d more annotations not shown (GitHub keeps few per step); see the job summary and the JSON report.", dropped)
		v.out.command(actions.Annotation(actions.LevelNotice, "trt-action", msg, "", 0))
	}
}

// runNotes lists annotations worst first: crashed, killed, failed, over
// budget (errors), then cancelled builds, budget warnings and build warnings.
func runNotes(r *report.Report, warnings []actions.Note, file string) []actions.Note {
	var notes []actions.Note
	for _, status := range []string{report.StatusCrashed, report.StatusKilled, report.StatusFailed, report.StatusBudgetExceeded, report.StatusCancelled} {
		level := actions.LevelError
		if status == report.StatusCancelled {
			level = actions.LevelWarning
		}
		for i := range r.Builds {
			if b := &r.Builds[i]; b.Status == status {
				notes = append(notes, actions.Note{
					Level: level, Title: "trt-action: " + b.Name + " " + b.Status,
					Message: buildMessage(b), File: file,
				})
			}
		}
	}
	notes = append(notes, warnings...)
	// A budget warning is also in its build's warnings: annotate it once,
	// as it was raised, not again here (GitHub keeps few per step).
	raised := map[actions.Note]bool{}
	for _, w := range warnings {
		raised[w] = true
	}
	for i := range r.Builds {
		name := r.Builds[i].Name
		for _, w := range r.Builds[i].Warnings {
			n := actions.Note{Level: actions.LevelWarning, Title: "trt-action: " + name, Message: w, File: file}
			asRaised := n
			asRaised.Title = budgetWarningTitle(name)
			if !raised[asRaised] {
				notes = append(notes, n)
			}
		}
	}
	return notes
}

// budgetWarningTitle is the title of a budget warning's annotation.
func budgetWarningTitle(build string) string { return "trt-action: " + build + " near its budget" }

// buildMessage names the build, what happened, and the phase and budget.
func buildMessage(b *report.Build) string {
	msg := fmt.Sprintf("%s: %s after %s%s.", b.Name, b.Status, text.DurationMs(b.DurationMs), report.ReasonSuffix(b))
	if b.Budget != nil && b.Reason != "" {
		msg += " Budget: " + report.BudgetText(b.Budget) + "."
	}
	if slow := report.SlowestPhase(b); slow != "" {
		msg += " Slowest phase: " + slow + "."
	}
	if detail := report.ScriptDetail(b); len(detail) > 0 {
		msg += "\n" + strings.Join(detail, "\n") // what went wrong inside the command
	}
	return msg
}

// Close implements event.View: it closes a group left open by an interrupted run
// and returns the first write error.
func (v *ActionsView) Close() error {
	if v.open >= 0 {
		v.out.command(actions.EndGroup())
		v.open = -1
	}
	v.out.endFence()
	v.out.flush()
	return v.out.err
}

// emitter keeps uncontrolled text and our own commands apart: text is
// written only inside a stop-commands fence, commands only outside it. The
// fence stays open from one event to the next, so a build's lines read as a
// log rather than a wall of fences; it closes before each of our commands
// and on Close. Every exit but SIGKILL closes it, and the runner sends that
// only while it tears the step down.
type emitter struct {
	w      io.Writer
	fence  actions.Fence
	buf    strings.Builder
	fenced bool
	err    error
}

func (e *emitter) text(lines ...string) {
	if len(lines) == 0 {
		return
	}
	if !e.fenced {
		e.line(e.fence.Start())
		e.fenced = true
	}
	for _, l := range lines {
		for _, part := range actions.SplitLines(l) {
			e.line(e.fence.Scrub(part))
		}
	}
}

func (e *emitter) command(line string) {
	if e.fenced {
		e.line(e.fence.End())
		e.fenced = false
	}
	e.line(line)
}

func (e *emitter) line(s string) {
	e.buf.WriteString(s)
	e.buf.WriteByte('\n')
}

// endFence lets commands run again.
func (e *emitter) endFence() {
	if e.fenced {
		e.line(e.fence.End())
		e.fenced = false
	}
}

// flush writes what is buffered; an open fence stays open.
func (e *emitter) flush() {
	if e.buf.Len() > 0 && e.err == nil {
		_, e.err = io.WriteString(e.w, e.buf.String())
	}
	e.buf.Reset()
}
