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

// phaseTable is one table for the whole run: the phase paths with the most
// self time (time in the phase and not in a phase under it) down, builds
// across, each cell a build's self time in that phase and its instances.
// Self time, unlike inclusive time, does not rank every ancestor of the
// slowest phase at the top, and one table instead of one per build makes
// the differences between builds stand out. ok is false when it does not
// fit in room.
func (s *summary) phaseTable(room int) (string, bool) {
	var cols []int // build indexes with phases
	withPhases := 0
	for i := range s.r.Builds {
		if !s.hasTree(i) {
			continue
		}
		withPhases++
		if len(cols) < maxTableCols {
			cols = append(cols, i)
		}
	}
	if len(cols) == 0 {
		return "", true
	}
	rows := s.phaseRows(cols)
	var b strings.Builder
	b.WriteString("\n### Phases by self time\n\n")
	b.WriteString("| Phase |")
	for _, i := range cols {
		fmt.Fprintf(&b, " %s |", text.Markdown(text.CutRunes(s.r.Builds[i].Name, maxColName)))
	}
	b.WriteString("\n|---|" + strings.Repeat("--:|", len(cols)) + "\n")
	for _, row := range rows[:min(len(rows), s.opts.TopPhases)] {
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
	if hidden := len(rows) - s.opts.TopPhases; hidden > 0 {
		left = append(left, text.Count(hidden, "more phase"))
	}
	if more := withPhases - len(cols); more > 0 {
		left = append(left, text.Count(more, "more build"))
	}
	if len(left) > 0 {
		b.WriteString(" " + strings.Join(left, " and ") + " in the JSON report.")
	}
	b.WriteString("_")
	b.WriteString("\n\n")
	if b.Len() > room {
		return "", false
	}
	return b.String(), true
}

// phaseRows lines up the phase paths of the given builds, most self time
// first; ties keep the order of the first build's tree.
func (s *summary) phaseRows(cols []int) []*phaseRow {
	byPath := map[string]*phaseRow{}
	var rows []*phaseRow
	for c, i := range cols {
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
		walk(s.tree(i), nil)
	}
	slices.SortStableFunc(rows, func(x, y *phaseRow) int { return cmp.Compare(y.self, x.self) })
	return rows
}
