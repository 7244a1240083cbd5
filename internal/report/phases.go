package report

import (
	"fmt"
	"strings"
	"time"
)

// PhaseTotal is the time spent in all instances of one phase path.
type PhaseTotal struct {
	Path  []string      // names from the root phase down
	Total time.Duration // summed over instances, children included
	Count int           // instances
	Share float64       // Total over the build's duration (0 when unknown)
	// Inner is the TensorRT build of a script build the phase ran in
	// (TensorRTBuild.Index); 0 for a build's own phase.
	Inner int
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

// SlowestPhase names (as "A/B/C", and for a script build "A/B/C (TensorRT
// build 2)") the phase a reader should look at first:
// starting from the slowest root phase, it follows the slowest child as long
// as that child holds at least half of its parent's time. "" when the build
// has no phases.
func SlowestPhase(b *Build) string {
	p, ok := SlowestPath(b)
	if !ok {
		return ""
	}
	if p.Inner > 0 {
		return fmt.Sprintf("%s (TensorRT build %d)", p.name(), p.Inner)
	}
	return p.name()
}

// SlowestPath is the phase SlowestPhase names, with its time; ok is false
// when the build has no phases. A script build's is the slowest of the
// ones its TensorRT builds point at, its share of the whole command's time.
func SlowestPath(b *Build) (PhaseTotal, bool) {
	if b.digest != nil {
		return b.digest.slowest, b.digest.hasSlowest
	}
	return slowestOf(b, b.Folded())
}

// slowestOf is SlowestPath's answer for b, whose folded tree is tree.
func slowestOf(b *Build, tree []*PhaseNode) (PhaseTotal, bool) {
	best, found := slowest(tree, b.DurationMs)
	if found {
		return best, true
	}
	for i := range b.TensorRTBuilds {
		t := &b.TensorRTBuilds[i]
		p, ok := slowest(t.Folded(), b.DurationMs)
		if ok && (!found || p.Total > best.Total) {
			p.Inner = t.Index
			best, found = p, true
		}
	}
	return best, found
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
