package terminal

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// renderFinal draws the table printed when the run ends, in place of the
// live area: one row per build (name, status, duration, peak memory,
// slowest phase, reason) and a summary line. Columns that do not fit the
// width are left out, memory first, then reason; the name and reason are
// shortened with an ellipsis.
func renderFinal(run *report.Report, width int, color bool) []string {
	if run == nil {
		return nil
	}
	rows := make([][]string, len(run.Builds))
	for i, b := range run.Builds {
		rows[i] = []string{
			report.Mark(b.Status) + " " + text.Line(b.Name),
			b.Status,
			text.DurationMs(b.DurationMs),
			report.MemoryText(b.Memory),
			slowestOrSaved(b, run.StartedAt),
			text.Line(cmp.Or(b.Reason, report.RebuildNote(&b), report.ScriptNote(&b))),
		}
	}
	cols := fitColumns([]string{"  build", "status", "time", "peak memory", "slowest phase", "reason"}, rows, width)
	lines := []string{line([]seg{{text: cols.titleRow(), style: dim}}, width, color)}
	for i, b := range run.Builds {
		st := green
		if !report.Succeeded(b.Status) {
			st = red
		}
		if cols.total() > width { // not even three cells a column: plain and cut
			lines = append(lines, line([]seg{{text: cols.row(rows[i])}}, width, false))
			continue
		}
		lines = append(lines, cols.paintRow(rows[i], st, color))
	}
	lines = append(lines, line([]seg{{text: summary(run), style: bold}}, width, color))
	if run.Interrupted != "" {
		lines = append(lines, line([]seg{{text: "interrupted: " + text.Line(run.Interrupted), style: yellow}}, width, color))
	}
	if run.Ended != "" {
		lines = append(lines, line([]seg{{text: "ended: " + text.Line(run.Ended), style: yellow}}, width, color))
	}
	if reg := report.RegressionsText(run); reg != "" {
		lines = append(lines, line([]seg{{text: "slower than the baseline allows: " + text.Line(reg), style: red}}, width, color))
	}
	return lines
}

// slowestOrSaved is the slowest phase, or for a cache hit, which ran no
// phase, what the hit saved (its age counted from the run's start).
func slowestOrSaved(b report.Build, runStart time.Time) string {
	if note := report.CacheNote(&b, runStart); note != "" {
		return text.Line(note)
	}
	return slowestPhase(b)
}

// slowestPhase names where a build spent its time: the phase the report
// points at (report.SlowestPath), with its time; in a script build, with
// the TensorRT build it ran in ("#2 Timing tactics 9.0s").
func slowestPhase(b report.Build) string {
	p, ok := report.SlowestPath(&b)
	if !ok {
		return ""
	}
	name := text.Line(p.Leaf())
	if p.Inner > 0 { // in a script build: which TensorRT build
		name = fmt.Sprintf("#%d %s", p.Inner, name)
	}
	return name + " " + text.Duration(p.Total)
}

// summary is the closing line: "3 builds in 4m12s: 2 ok, 1 budget-exceeded".
func summary(run *report.Report) string {
	var order []string
	counts := map[string]int{}
	for _, b := range run.Builds {
		if counts[b.Status] == 0 {
			order = append(order, b.Status)
		}
		counts[b.Status]++
	}
	parts := make([]string, len(order))
	for i, st := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[st], st)
	}
	return fmt.Sprintf("%s in %s: %s", text.Count(len(run.Builds), "build"), text.DurationMs(run.DurationMs), strings.Join(parts, ", "))
}

// columns is a table layout: which columns are shown and how wide each is.
type columns struct {
	titles []string
	show   []bool
	widths []int
}

const (
	colName = iota
	colStatus
	colTime
	colMemory
	colSlowest
	colReason
)

const gap = "  "

// fitColumns sizes the table's columns to their content. When the table is
// too wide it leaves out the least useful columns (peak memory, reason,
// then slowest phase) until their shortest useful widths fit, then takes the missing
// cells from the slowest phase, from names longer than 30% of the width,
// from the reason, and last from the names again.
func fitColumns(titles []string, rows [][]string, w int) columns {
	c := columns{titles: titles, show: make([]bool, len(titles)), widths: make([]int, len(titles))}
	least := make([]int, len(titles))
	for i, t := range titles {
		c.widths[i] = width(t)
		for _, r := range rows {
			c.widths[i] = max(c.widths[i], width(r[i]))
		}
		c.show[i] = i < colMemory || anyText(rows, i) // empty optional columns stay out
		least[i] = c.widths[i]
		switch i {
		case colName, colReason:
			least[i] = min(12, c.widths[i])
		case colSlowest:
			least[i] = min(20, c.widths[i])
		}
	}
	for _, drop := range []int{colMemory, colReason, colSlowest} {
		if c.totalOf(least) <= w {
			break
		}
		c.show[drop] = false
	}
	c.shrink(colSlowest, c.total()-w, least[colSlowest])
	c.shrink(colName, c.total()-w, max(least[colName], w*3/10))
	c.shrink(colReason, c.total()-w, least[colReason])
	c.shrink(colName, c.total()-w, least[colName])
	// A terminal too narrow even for that: names and statuses give way.
	c.shrink(colName, c.total()-w, 3)
	c.shrink(colStatus, c.total()-w, 3)
	return c
}

func anyText(rows [][]string, i int) bool {
	for _, r := range rows {
		if r[i] != "" {
			return true
		}
	}
	return false
}

// shrink takes up to by cells from column i, keeping at least least.
func (c *columns) shrink(i, by, least int) {
	if by > 0 && c.show[i] {
		c.widths[i] = max(min(least, c.widths[i]), c.widths[i]-by)
	}
}

func (c columns) total() int { return c.totalOf(c.widths) }

// totalOf is the table's width with the shown columns as wide as widths.
func (c columns) totalOf(widths []int) int {
	n := 0
	for i, ok := range c.show {
		if ok {
			if n > 0 {
				n += len(gap)
			}
			n += widths[i]
		}
	}
	return n
}

// cells lays out one row's cells, padded to their columns' widths.
// The titles pass isTitle, so "slowest phase" is not mistaken for a phase
// name and its duration.
func (c columns) cells(r []string, isTitle bool) []string {
	var out []string
	for i, ok := range c.show {
		if !ok {
			continue
		}
		cell := ellipsize(r[i], c.widths[i])
		if i == colSlowest && !isTitle {
			cell = shortenKeepingTime(r[i], c.widths[i])
		}
		out = append(out, cell+strings.Repeat(" ", c.widths[i]-width(cell)))
	}
	return out
}

func (c columns) row(r []string) string {
	return strings.TrimRight(strings.Join(c.cells(r, false), gap), " ")
}

func (c columns) titleRow() string {
	return strings.TrimRight(strings.Join(c.cells(c.titles, true), gap), " ")
}

// paintRow colours a row's mark and status; the rest stays plain.
func (c columns) paintRow(r []string, st style, color bool) string {
	if !color {
		return c.row(r)
	}
	cells := c.cells(r, false)
	if m := report.Mark(r[colStatus]); strings.HasPrefix(cells[colName], m) {
		cells[colName] = paint([]seg{{text: m, style: st}, {text: cells[colName][len(m):]}}, true)
	}
	status := strings.TrimRight(cells[colStatus], " ")
	cells[colStatus] = paint([]seg{{text: status, style: st}, {text: cells[colStatus][len(status):]}}, true)
	return strings.TrimRight(strings.Join(cells, gap), " ")
}

// shortenKeepingTime shortens a "phase-name duration" cell in its name, so
// the duration, the point of the column, stays readable.
func shortenKeepingTime(cell string, w int) string {
	i := strings.LastIndexByte(cell, ' ')
	if i < 0 {
		return ellipsize(cell, w)
	}
	return paint(fit([]seg{{text: cell[:i], flex: true}, {text: cell[i:]}}, w), false)
}
