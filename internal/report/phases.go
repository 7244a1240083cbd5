package report

import (
	"cmp"
	"slices"
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

// Name joins the path the way BudgetHit.Phase does: "Building engine/Timing tactics".
func (p PhaseTotal) Name() string { return strings.Join(p.Path, "/") }

// Leaf is the innermost phase name.
func (p PhaseTotal) Leaf() string {
	if len(p.Path) == 0 {
		return ""
	}
	return p.Path[len(p.Path)-1]
}

// TopPhases returns the n phase paths with the most total time, most first;
// ties keep tree order. n <= 0 returns all. Phases that never finished count
// until the end of the build.
func TopPhases(b *Build, n int) []PhaseTotal {
	return topPhases(aggregate(b), b.DurationMs, n)
}

func topPhases(root *aggNode, buildMs int64, n int) []PhaseTotal {
	all := flatten(root, buildMs)
	slices.SortStableFunc(all, func(x, y PhaseTotal) int { return cmp.Compare(y.Total, x.Total) })
	if n > 0 && len(all) > n {
		all = all[:n]
	}
	return all
}

// SlowestPhase names (as "A/B/C") the phase a reader should look at first:
// starting from the slowest root phase, it follows the slowest child as long
// as that child holds at least half of its parent's time. "" when the build
// has no phases.
func SlowestPhase(b *Build) string {
	p, ok := slowest(aggregate(b), b.DurationMs)
	if !ok {
		return ""
	}
	return p.Name()
}

// aggNode sums the instances of one phase path.
type aggNode struct {
	name     string
	total    time.Duration
	count    int
	children []*aggNode
	byName   map[string]*aggNode // only for wide nodes; narrow ones scan children
}

func (n *aggNode) child(name string) *aggNode {
	if n.byName != nil {
		if c := n.byName[name]; c != nil {
			return c
		}
	} else {
		for _, c := range n.children {
			if c.name == name {
				return c
			}
		}
	}
	c := &aggNode{name: name}
	n.children = append(n.children, c)
	if n.byName != nil {
		n.byName[name] = c
	} else if len(n.children) > 8 {
		n.byName = make(map[string]*aggNode, len(n.children))
		for _, x := range n.children {
			n.byName[x.name] = x
		}
	}
	return c
}

// aggregate builds the per-path tree; its root is a nameless node above the
// build's root phases.
func aggregate(b *Build) *aggNode {
	root := &aggNode{}
	var walk func(into *aggNode, phases []*Phase)
	walk = func(into *aggNode, phases []*Phase) {
		for _, p := range phases {
			if p == nil {
				continue
			}
			c := into.child(p.Name)
			c.total += phaseDuration(p, b.DurationMs)
			c.count++
			walk(c, p.Children)
		}
	}
	walk(root, b.Phases)
	for _, c := range root.children {
		root.total += c.total
	}
	return root
}

// phaseDuration is one instance's length; an unfinished phase runs to the
// build's end.
func phaseDuration(p *Phase, buildMs int64) time.Duration {
	end := p.EndMs
	if end < 0 {
		end = buildMs
	}
	return max(0, time.Duration(end-p.StartMs)*time.Millisecond)
}

func flatten(root *aggNode, buildMs int64) []PhaseTotal {
	var out []PhaseTotal
	var walk func(n *aggNode, path []string)
	walk = func(n *aggNode, path []string) {
		for _, c := range n.children {
			p := append(slices.Clip(path), c.name)
			out = append(out, phaseTotal(c, p, buildMs))
			walk(c, p)
		}
	}
	walk(root, nil)
	return out
}

func phaseTotal(n *aggNode, path []string, buildMs int64) PhaseTotal {
	t := PhaseTotal{Path: path, Total: n.total, Count: n.count}
	if buildMs > 0 {
		t.Share = float64(n.total) / float64(time.Duration(buildMs)*time.Millisecond)
	}
	return t
}

func slowest(root *aggNode, buildMs int64) (PhaseTotal, bool) {
	var path []string
	cur := root
	for {
		best := slowestChild(cur)
		if best == nil || (len(path) > 0 && 2*best.total < cur.total) {
			break
		}
		path = append(path, best.name)
		cur = best
	}
	if len(path) == 0 {
		return PhaseTotal{}, false
	}
	return phaseTotal(cur, path, buildMs), true
}

func slowestChild(n *aggNode) *aggNode {
	var best *aggNode
	for _, c := range n.children {
		if best == nil || c.total > best.total {
			best = c
		}
	}
	return best
}
