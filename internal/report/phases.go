package report

import (
	"strings"
	"time"
)

// PhaseTotal is the time spent in all instances of one phase path.
type PhaseTotal struct {
	Path  []string      // names from the root phase down
	Total time.Duration // summed over instances, children included
	Count int           // instances
	Share float64       // Total over the build's duration (0 when unknown)
}

// name joins the path the way BudgetHit.Phase does: "Building engine/Timing tactics".
func (p PhaseTotal) name() string { return strings.Join(p.Path, "/") }

// Leaf is the innermost phase name.
func (p PhaseTotal) Leaf() string {
	if len(p.Path) == 0 {
		return ""
	}
	return p.Path[len(p.Path)-1]
}

// SlowestPhase names (as "A/B/C") the phase a reader should look at first:
// starting from the slowest root phase, it follows the slowest child as long
// as that child holds at least half of its parent's time. "" when the build
// has no phases.
func SlowestPhase(b *Build) string {
	p, ok := SlowestPath(b)
	if !ok {
		return ""
	}
	return p.name()
}

// SlowestPath is the phase SlowestPhase names, with its time; ok is false
// when the build has no phases.
func SlowestPath(b *Build) (PhaseTotal, bool) {
	if b.digest != nil {
		return b.digest.slowest, b.digest.hasSlowest
	}
	return slowest(b.Folded(), b.DurationMs)
}

func phaseTotal(n *PhaseNode, path []string, buildMs int64) PhaseTotal {
	t := PhaseTotal{Path: path, Total: time.Duration(n.TotalMs) * time.Millisecond, Count: n.Count}
	if buildMs > 0 {
		t.Share = float64(n.TotalMs) / float64(buildMs)
	}
	return t
}

func slowest(tree []*PhaseNode, buildMs int64) (PhaseTotal, bool) {
	var path []string
	var cur *PhaseNode
	for level := tree; ; {
		best := slowestNode(level)
		if best == nil || (cur != nil && 2*best.TotalMs < cur.TotalMs) {
			break
		}
		path = append(path, best.Name)
		cur, level = best, best.Children
	}
	if cur == nil {
		return PhaseTotal{}, false
	}
	return phaseTotal(cur, path, buildMs), true
}

func slowestNode(ns []*PhaseNode) *PhaseNode {
	var best *PhaseNode
	for _, c := range ns {
		if best == nil || c.TotalMs > best.TotalMs {
			best = c
		}
	}
	return best
}
