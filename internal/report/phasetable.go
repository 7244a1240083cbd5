package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// The phase table's size: enough rows to explain a build, enough columns to
// compare a few, and a cell short enough that the table stays readable.
const (
	maxTableRows = 15
	maxTableCols = 8
	maxColName   = 40 // runes of a build name in a column header
)

// phaseRow is one phase path across the table's builds.
type phaseRow struct {
	path  []string
	self  int64        // summed over the table's builds, for ranking
	cells []*PhaseNode // per column; nil where the build has no such phase
}

// phaseColumn is one build's column of a phase table.
type phaseColumn struct {
	name string // already escaped
	tree []*PhaseNode
}

// phaseTable is one table for the whole run: the phase paths with the most
// self time (time in the phase and not in a phase under it) down, builds
// across, each cell a build's self time in that phase and its instances.
// Self time, unlike inclusive time, does not rank every ancestor of the
// slowest phase at the top, and one table instead of one per build makes
// the differences between builds stand out. ok is false when it does not
// fit in room.
func (s *summary) phaseTable(room int) (string, bool) {
	var cols []phaseColumn
	withPhases := 0
	for i := range s.r.Builds {
		if !s.hasTree(i) {
			continue
		}
		withPhases++
		if len(cols) < maxTableCols {
			cols = append(cols, phaseColumn{text.Markdown(text.CutRunes(s.r.Builds[i].Name, maxColName)), s.tree(i)})
		}
	}
	if len(cols) == 0 {
		return "", true
	}
	table := "\n### Phases by self time\n\n" + phaseTableOf(cols, s.opts.TopPhases, withPhases-len(cols), "more build") + "\n"
	return table, len(table) <= room
}

// phaseTableOf is the table of phases by self time of cols (a run's
// builds, or the TensorRT builds of one script build): at most top rows,
// and a note of the rows and of the more columns (named by moreNoun) left
// out.
func phaseTableOf(cols []phaseColumn, top, more int, moreNoun string) string {
	rows := phaseRows(cols)
	var b strings.Builder
	b.WriteString("| Phase |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("--:|", len(cols)) + "\n")
	for _, row := range rows[:min(len(rows), top)] {
		fmt.Fprintf(&b, "| %s |", phasePath(row.path))
		for _, n := range row.cells {
			if n == nil {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(&b, " %s ×%d |", text.DurationMs(n.selfMs()), n.Count)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n_Self time: in the phase and not in a phase under it; ×N: instances.")
	var left []string
	if hidden := len(rows) - top; hidden > 0 {
		left = append(left, text.Count(hidden, "more phase"))
	}
	if more > 0 {
		left = append(left, text.Count(more, moreNoun))
	}
	if len(left) > 0 {
		b.WriteString(" " + strings.Join(left, " and ") + " in the JSON report.")
	}
	b.WriteString("_\n")
	return b.String()
}

// phaseRows lines up the phase paths of the given columns, most self time
// first; ties keep the order of the first column's tree.
func phaseRows(cols []phaseColumn) []*phaseRow {
	byPath := map[string]*phaseRow{}
	var rows []*phaseRow
	for c, col := range cols {
		var walk func(ns []*PhaseNode, path []string)
		walk = func(ns []*PhaseNode, path []string) {
			for _, n := range ns {
				p := append(slices.Clip(path), n.Name)
				key := strings.Join(p, "\x00")
				row := byPath[key]
				if row == nil {
					row = &phaseRow{path: p, cells: make([]*PhaseNode, len(cols))}
					byPath[key] = row
					rows = append(rows, row)
				}
				row.cells[c] = n
				row.self += n.selfMs()
				walk(n.Children, p)
			}
		}
		walk(col.tree, nil)
	}
	slices.SortStableFunc(rows, func(x, y *phaseRow) int { return cmp.Compare(y.self, x.self) })
	return rows
}
