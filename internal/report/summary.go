package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// defaultSummaryBytes keeps the summary under the runner's 1 MiB per-step
// limit (a larger summary is dropped whole) with room to spare.
const defaultSummaryBytes = 1_000_000

// SummaryOptions shape the job summary.
type SummaryOptions struct {
	MaxBytes  int // default defaultSummaryBytes
	TopPhases int // rows of the phase table (default 15)
	// Comparison (the baseline comparison, Markdown) goes right after the
	// table of builds: a regression over its threshold fails the run, so
	// it comes before the details. It counts against MaxBytes.
	Comparison string
}

// Limits that keep each part of the summary readable and bounded.
const (
	maxProblemSections = 50     // builds that did not succeed, with reasons
	maxGanttBytes      = 40_000 // Mermaid refuses diagrams over 50,000 characters
	maxGanttTasks      = 24     // per build
	maxLogLines        = 5      // TensorRT lines quoted per failed build
	maxOutputLines     = 10     // lines of a script build's output quoted
	maxOutputRunes     = 300    // of each of them
	noteRoom           = 400    // bytes kept free for the notes about omissions
)

// Summary renders the job summary as GitHub-flavoured Markdown: a headline,
// a table of builds, the shared cache store's use (its totals, mode and
// warnings, for a run with one), a section per build that did not succeed, a section
// per build that ran a command listing the TensorRT builds inside it, one
// table of the phases by self time across builds, and a Mermaid timeline
// in which builds that did not succeed show red. It stays within
// opts.MaxBytes by dropping, in order, the timeline, the phase details,
// the sections of the builds that ran a command, and then table rows (with
// a note pointing at the JSON report).
func Summary(r *Report, opts SummaryOptions) string {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = defaultSummaryBytes
	}
	if opts.TopPhases <= 0 {
		opts.TopPhases = maxTableRows
	}
	s := &summary{r: r, opts: opts, folded: make([][]*PhaseNode, len(r.Builds)), wholes: map[int]*Build{}, memory: hasMemory(r)}
	// The baseline comparison and the settings that differ follow the
	// table of builds, before what went wrong.
	head, problems := s.head(), sharedCacheSection(r)+opts.Comparison+settingsTable(r.Builds)+s.problems()+cacheWarnings(r.Builds)
	rows := s.rows()
	base := len(head) + len(s.tableHeader()) + len(problems)
	for _, row := range rows {
		base += len(row)
	}
	if base+noteRoom > opts.MaxBytes {
		return s.truncated(head, rows, problems)
	}
	table := s.tableHeader() + strings.Join(rows, "")
	room := opts.MaxBytes - base - noteRoom
	scripts := s.scriptSections(room)
	room -= len(scripts)
	details, ok := s.phaseTable(room)
	if !ok {
		return head + table + problems + scripts + "\n_Phase details and timeline left out to keep the summary under the size limit; see the JSON report._\n"
	}
	timeline := s.timeline(room - len(details))
	return head + table + problems + scripts + details + timeline
}

type summary struct {
	r      *Report
	opts   SummaryOptions
	folded [][]*PhaseNode // per build, computed once
	wholes map[int]*Build // settled builds read back whole, by index
	memory bool           // some build has memory figures: the table has their column
}

func (s *summary) tree(i int) []*PhaseNode {
	if s.folded[i] == nil {
		s.folded[i] = s.r.Builds[i].Folded()
	}
	return s.folded[i]
}

// whole is build i with all its detail: the report's own, or for a build
// the report settled, read back from its encoding once (only the builds a
// capped part of the summary draws in detail are). When that fails, it is
// the settled build: the summary then shows it without its phases.
func (s *summary) whole(i int) *Build {
	b := &s.r.Builds[i]
	if b.digest == nil {
		return b
	}
	if w := s.wholes[i]; w != nil {
		return w
	}
	w, err := b.digest.whole()
	if err != nil {
		return b
	}
	s.wholes[i] = &w
	return &w
}

// The digest of a build the report settled answers what every build is
// asked, so that only the builds a capped view draws are read back.

func (s *summary) hasTree(i int) bool {
	if d := s.r.Builds[i].digest; d != nil {
		return d.hasTree
	}
	return len(s.tree(i)) > 0
}

// hasGantt is whether build i has a part in the timeline: its own phases,
// or a TensorRT build's inside it.
func (s *summary) hasGantt(i int) bool { return s.ganttBytes(i) > 0 }

func (s *summary) slowest(i int) (PhaseTotal, bool) {
	if d := s.r.Builds[i].digest; d != nil {
		return d.slowest, d.hasSlowest
	}
	return slowestOf(&s.r.Builds[i], s.tree(i))
}

// ganttBytes is the size of build i's sections of the timeline.
func (s *summary) ganttBytes(i int) int {
	if d := s.r.Builds[i].digest; d != nil {
		return d.ganttBytes
	}
	return len(ganttSections(&s.r.Builds[i], s.tree(i)))
}

func (s *summary) head() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", text.Markdown(Headline(s.r)))
	var meta []string
	for _, m := range []string{s.r.Tool, s.r.Matrix} {
		if m != "" {
			meta = append(meta, text.Markdown(m)) // <sub> on a line is inline HTML: Markdown applies
		}
	}
	if !s.r.StartedAt.IsZero() {
		meta = append(meta, "started "+s.r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if len(meta) > 0 {
		fmt.Fprintf(&b, "<sub>%s</sub>\n\n", strings.Join(meta, " · "))
	}
	return b.String()
}

const tableHeader = "| Build | Status | Backend | Time | Slowest phase | Budget used |\n|---|---|---|--:|---|--:|\n"

// memoryTableHeader is tableHeader with the peak memory column, for a run
// with memory figures (a report written before trt-action measured memory
// has none, and keeps its table).
const memoryTableHeader = "| Build | Status | Backend | Time | Peak memory | Slowest phase | Budget used |\n|---|---|---|--:|--:|---|--:|\n"

func (s *summary) tableHeader() string {
	if s.memory {
		return memoryTableHeader
	}
	return tableHeader
}

// hasMemory reports whether any build of r has memory figures.
func hasMemory(r *Report) bool {
	for i := range r.Builds {
		if r.Builds[i].Memory != nil {
			return true
		}
	}
	return false
}

// memoryCell is the table's peak memory cell: "31.2 GB · OOM-killed"
// for a build the kernel's OOM killer ended.
func memoryCell(b *Build) string {
	cell := MemoryText(b.Memory)
	if cell == "" {
		return "—"
	}
	if b.Memory.OOMKills > 0 {
		cell += " · OOM-killed"
	}
	return text.Markdown(cell)
}

func (s *summary) rows() []string {
	rows := make([]string, len(s.r.Builds))
	for i := range s.r.Builds {
		b := &s.r.Builds[i]
		slow := "—"
		if note := CacheNote(b, s.r.StartedAt); note != "" {
			slow = text.Markdown(note) // no phase ran: what the hit saved
		} else if p, ok := s.slowest(i); ok {
			slow = slowestCell(p)
		}
		if b.Script != nil { // what ran inside the command, then where its time went
			slow = innerCountCell(b, slow)
		}
		backend := text.Markdown(b.Backend)
		if b.GPU != "" {
			backend += " · GPU " + text.Markdown(b.GPU) // which GPU built what
		}
		status := statusLabel(b.Status)
		if note := RebuildNote(b); note != "" {
			status += " · " + text.Markdown(note) // --rebuild: what became of the cache entry
		}
		if b.Script != nil && ended(b) {
			status += " · " + text.Markdown(ExitText(b.Script)) // how the command ended
		}
		took := text.DurationMs(b.DurationMs)
		if s.memory {
			took += " | " + memoryCell(b)
		}
		rows[i] = fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n",
			text.Markdown(b.Name), status, backend, took, slow, budgetUse(b))
	}
	return rows
}

// slowestCell is the table's "Slowest phase" cell: the phase's name, in a
// script build the TensorRT build it ran in, and its share of the time.
func slowestCell(p PhaseTotal) string {
	name := p.Leaf()
	if p.Inner > 0 {
		name = fmt.Sprintf("#%d %s", p.Inner, name)
	}
	cell := text.Markdown(name)
	if p.Share > 0 {
		cell += " · " + percent(p.Share)
	}
	return cell
}

// innerCountCell puts how many TensorRT builds a script build ran before
// its slowest phase ("—" for none): a warning when it ran none seen.
func innerCountCell(b *Build, slow string) string {
	switch {
	case len(b.TensorRTBuilds) == 0 && !ended(b):
		return slow // none yet
	case len(b.TensorRTBuilds) == 0:
		return "⚠️ " + text.Markdown(InnerCount(b))
	}
	if slow == "—" {
		return text.Markdown(InnerCount(b))
	}
	return text.Markdown(InnerCount(b)) + " · " + slow
}

func statusLabel(status string) string {
	emoji := map[string]string{
		StatusOK: "✅", StatusFailed: "❌", StatusBudgetExceeded: "⏱️", StatusCancelled: "🚫",
		StatusCrashed: "💥", StatusKilled: "🛑", StatusPending: "⏸️", StatusRunning: "⏳",
		StatusCached: "♻️",
	}[status]
	if emoji == "" {
		emoji = "❔"
	}
	return emoji + " " + text.Markdown(status)
}

// budgetUse is the share of the tightest limit used: the supervisor's
// BudgetUse (percent), or for a build stopped by a limit, that limit's share.
func budgetUse(b *Build) string {
	use := b.BudgetUse / 100
	switch {
	case use > 0 || b.Budget == nil:
	case b.Budget.LimitMs > 0:
		use = float64(b.Budget.ElapsedMs) / float64(b.Budget.LimitMs)
	case b.Budget.LimitBytes > 0:
		use = float64(b.Budget.PeakBytes) / float64(b.Budget.LimitBytes)
	}
	if use <= 0 {
		return "—"
	}
	return percent(use)
}

func failed(b *Build) bool { return failedStatus(b.Status) }

// failedStatus is whether a build (or a TensorRT build inside one) of this
// status ended without its engine.
func failedStatus(status string) bool {
	switch status {
	case StatusOK, StatusCached, StatusPending, StatusRunning:
		return false
	}
	return true
}

// problems is a section per build that did not succeed, with its reason,
// the limit it hit, and TensorRT's last errors.
func (s *summary) problems() string {
	var b strings.Builder
	shown, more := 0, 0
	for i := range s.r.Builds {
		build := &s.r.Builds[i]
		if !failed(build) {
			continue
		}
		if shown == maxProblemSections {
			more++
			continue
		}
		shown++
		problemSection(&b, build)
	}
	if more > 0 {
		fmt.Fprintf(&b, "_… and %d more builds that did not succeed; see the table and the JSON report._\n\n", more)
	}
	return b.String()
}

func problemSection(b *strings.Builder, build *Build) {
	fmt.Fprintf(b, "\n### %s — %s\n\n", text.Markdown(build.Name), statusLabel(build.Status))
	fmt.Fprintf(b, "%s after %s%s\n\n", text.Markdown(build.Status), text.DurationMs(build.DurationMs), text.Markdown(text.CutRunes(ReasonSuffix(build), 1000)))
	if build.Budget != nil && build.Reason != "" {
		fmt.Fprintf(b, "Budget: %s\n\n", text.Markdown(BudgetText(build.Budget)))
	}
	for _, w := range build.Warnings[:min(len(build.Warnings), 5)] {
		fmt.Fprintf(b, "- ⚠️ %s\n", text.Markdown(text.CutRunes(w, 300)))
	}
	if len(build.Warnings) > 0 {
		b.WriteString("\n")
	}
	if lines := lastLog(build.Log); len(lines) > 0 {
		b.WriteString("<pre>\n")
		for _, l := range lines {
			fmt.Fprintf(b, "%s: %s\n", text.HTML(l.Severity), text.HTML(text.CutRunes(l.Text, 300)))
		}
		b.WriteString("</pre>\n\n")
	}
	if build.Script != nil && len(build.Script.OutputTail) > 0 {
		b.WriteString("Last lines of output:\n\n")
		outputTail(b, build.Script.OutputTail)
	}
}

// outputTail quotes the last lines a script build's command printed, as
// TensorRT's lines are quoted: a <pre> block, each line cut and escaped.
func outputTail(b *strings.Builder, tail []string) {
	b.WriteString("<pre>\n")
	for _, l := range tail[max(0, len(tail)-maxOutputLines):] {
		b.WriteString(text.HTML(text.CutRunes(l, maxOutputRunes)) + "\n")
	}
	b.WriteString("</pre>\n\n")
}

// lastLog is TensorRT's last errors, or its last warnings when it logged no
// error.
func lastLog(log []LogLine) []LogLine {
	for _, severity := range []string{SeverityError, SeverityWarning} {
		var picked []LogLine
		for _, l := range log {
			if l.Severity == severity {
				picked = append(picked, l)
			}
		}
		if len(picked) > 0 {
			return picked[max(0, len(picked)-maxLogLines):]
		}
	}
	return nil
}

// phasePath shows a path as "… › B › C", keeping the three innermost names.
func phasePath(path []string) string {
	var parts []string
	if len(path) > 3 {
		parts = append(parts, "…")
		path = path[len(path)-3:]
	}
	for _, p := range path {
		parts = append(parts, text.Markdown(text.CutRunes(p, 80)))
	}
	return strings.Join(parts, " › ")
}

// timeline is a Mermaid gantt chart of each build's phases down to depth 2,
// on the run's clock in seconds. Builds are added while the chart stays
// under Mermaid's size limit and room.
func (s *summary) timeline(room int) string {
	limit := min(room, maxGanttBytes)
	var sections []string
	size, withPhases := 0, 0
	var spanMs int64
	for i := range s.r.Builds {
		if !s.hasGantt(i) {
			continue
		}
		withPhases++
		n := s.ganttBytes(i)
		if size+n > limit {
			continue
		}
		size += n
		b := &s.r.Builds[i]
		spanMs = max(spanMs, b.StartMs+b.DurationMs)
		if len(b.TensorRTBuilds) > 0 { // their trees: a settled build's are in its encoding
			b = s.whole(i)
		}
		sections = append(sections, ganttSections(b, s.tree(i)))
	}
	if len(sections) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Timeline\n\n")
	if len(sections) < withPhases {
		fmt.Fprintf(&b, "_%d of %d builds shown; the rest would exceed the diagram size limit._\n\n", len(sections), withPhases)
	}
	fmt.Fprintf(&b, "```mermaid\ngantt\n  dateFormat x\n  axisFormat %s\n", ganttAxisFormat(spanMs))
	for _, sec := range sections {
		b.WriteString(sec)
	}
	b.WriteString("```\n")
	return b.String()
}

// ganttAxisFormat labels the time axis in seconds since the run began
// (d3's %s; the chart's times are milliseconds from the epoch, so the
// viewer's time zone cannot shift them, as it would %M or %H). A chart
// shorter than 10 s gets milliseconds too: its ticks fall within a second
// and whole seconds would label them all "0".
func ganttAxisFormat(spanMs int64) string {
	if spanMs < 10_000 {
		return "%s.%L"
	}
	return "%s"
}

type ganttTask struct {
	name       string
	start, end int64 // ms on the run's clock
}

// maxGanttInner is how many TensorRT builds of one script build the
// timeline draws, as many as its phase table has columns.
const maxGanttInner = maxTableCols

// ganttSections is a build's part of the timeline: a section of its own
// phases (tree, folded), and for a script build one for each of its first
// TensorRT builds with phases.
func ganttSections(b *Build, tree []*PhaseNode) string {
	var sb strings.Builder
	if len(tree) > 0 {
		sb.WriteString(ganttSection(text.MermaidName(b.Name)+ganttPeak(b.Memory), b.StartMs, b.DurationMs, failed(b), tree))
	}
	drawn := 0
	for i := range b.TensorRTBuilds {
		t := &b.TensorRTBuilds[i]
		inner := t.Folded()
		if len(inner) == 0 || drawn == maxGanttInner {
			continue
		}
		drawn++
		// The name is cut so the build's own words (safe ones) stay.
		name := fmt.Sprintf("%s (TensorRT build %d)%s", text.MermaidName(text.CutRunes(b.Name, 40)), t.Index, ganttPeak(t.Memory))
		// Its phases' times, like its start, are on the script build's
		// clock (internal/build/scriptinner.go): they count from b.StartMs.
		sb.WriteString(ganttSection(name, b.StartMs, t.EndMs(), failedStatus(t.Status), inner))
	}
	return sb.String()
}

// ganttPeak is what a timeline section's name says of its build's peak
// memory, " (peak 1.8 GB)" (letters, digits, dots and spaces: safe for
// Mermaid); "" without one.
func ganttPeak(m *Memory) string {
	if m == nil || m.PeakHostBytes == 0 {
		return ""
	}
	return " (peak " + text.Bytes(m.PeakHostBytes) + ")"
}

// ganttSection draws each phase path down to depth 2 from its first start
// to its last end: a section called name (safe for Mermaid). The tree's
// times count from originMs on the run's clock (the start of the build
// whose clock they are on); a phase that never finished ends at openEndMs
// on that same clock.
func ganttSection(name string, originMs, openEndMs int64, failed bool, tree []*PhaseNode) string {
	var tasks []ganttTask
	var walk func(ns []*PhaseNode, depth int)
	walk = func(ns []*PhaseNode, depth int) {
		for _, n := range ns {
			end := n.LastEndMs
			if end < 0 {
				end = openEndMs
			}
			tasks = append(tasks, ganttTask{text.MermaidName(n.Name), originMs + n.FirstStartMs, originMs + max(end, n.FirstStartMs)})
			if depth < 2 {
				walk(n.Children, depth+1)
			}
		}
	}
	walk(tree, 1)
	if len(tasks) > maxGanttTasks { // keep the longest, in time order
		slices.SortStableFunc(tasks, func(x, y ganttTask) int { return cmp.Compare(y.end-y.start, x.end-x.start) })
		tasks = tasks[:maxGanttTasks]
		slices.SortStableFunc(tasks, func(x, y ganttTask) int { return cmp.Compare(x.start, y.start) })
	}
	tag := ""
	if failed {
		tag = "crit, " // Mermaid draws critical tasks red
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  section %s\n", name)
	for _, t := range tasks {
		fmt.Fprintf(&b, "  %s :%s%d, %d\n", t.name, tag, t.start, t.end)
	}
	return b.String()
}

// truncated is the summary when even the table does not fit: as many rows
// as fit, then a note. The problem sections go too if they alone overflow.
func (s *summary) truncated(head string, rows []string, problems string) string {
	fixed := len(head) + len(s.tableHeader()) + noteRoom
	if fixed+len(problems) > s.opts.MaxBytes {
		problems = ""
	}
	if fixed > s.opts.MaxBytes {
		return text.CutAtLine(head, s.opts.MaxBytes)
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(s.tableHeader())
	room := s.opts.MaxBytes - fixed - len(problems)
	n := 0
	for _, row := range rows {
		if len(row) > room {
			break
		}
		room -= len(row)
		b.WriteString(row)
		n++
	}
	if n < len(rows) {
		fmt.Fprintf(&b, "\n_… and %d more builds, see the JSON report._\n", len(rows)-n)
	}
	b.WriteString(problems)
	if problems == "" && hasProblems(s.r) {
		b.WriteString("\n_Reasons for builds that did not succeed are in the JSON report._\n")
	}
	return b.String()
}

func hasProblems(r *Report) bool {
	for i := range r.Builds {
		if failed(&r.Builds[i]) {
			return true
		}
	}
	return false
}

func percent(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }
