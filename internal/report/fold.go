package report

import (
	"container/heap"
	"slices"
	"strings"
	"time"
)

// DefaultSlowestInstances is how many of a build's slowest phase instances
// a report keeps beside the folded tree.
const DefaultSlowestInstances = 20

// PhaseNode is every instance of one phase path, folded: TensorRT repeats
// the same phases thousands of times in one build (one "Measuring tactic
// time" per tactic), so the report keeps one node per path, whose size
// follows the build's shape and not its length. Instances that never
// finished count until the build's end.
type PhaseNode struct {
	Name         string       `json:"name"`
	Count        int          `json:"count"`                // instances
	Unfinished   int          `json:"unfinished,omitempty"` // instances still running when the build ended
	TotalMs      int64        `json:"total_ms"`             // summed over instances, children included
	MinMs        int64        `json:"min_ms"`
	MaxMs        int64        `json:"max_ms"`
	FirstStartMs int64        `json:"first_start_ms"` // offsets from the build's start
	LastEndMs    int64        `json:"last_end_ms"`    // -1 when an instance never finished
	Done         int64        `json:"steps_done"`     // summed over instances
	Steps        int64        `json:"steps"`          // nbSteps summed over instances
	Children     []*PhaseNode `json:"children,omitempty"`
}

// selfMs is the time in the phase and not in a child phase. Children on
// other threads can overlap, so it never goes below zero.
func (n *PhaseNode) selfMs() int64 {
	self := n.TotalMs
	for _, c := range n.Children {
		self -= c.TotalMs
	}
	return max(self, 0)
}

// PhaseInstance is one of a build's slowest phase instances.
type PhaseInstance struct {
	Path       []string `json:"path"` // names from the root phase down
	StartMs    int64    `json:"start_ms"`
	EndMs      int64    `json:"end_ms"` // -1 when it never finished
	DurationMs int64    `json:"duration_ms"`
}

// FoldNode is a PhaseNode while instances are being folded into it, with
// exact times; Folder.Tree exports it.
type FoldNode struct {
	name     string
	path     string // names from the root down, joined by "/"
	parent   *FoldNode
	depth    int // 1 for a root phase
	count    int
	open     int // instances that never finished
	total    time.Duration
	min, max time.Duration
	first    time.Duration
	last     time.Duration
	done     int64
	steps    int64
	children []*FoldNode
	byName   map[string]*FoldNode // only for wide nodes; narrow ones scan children
}

// Path is the names from the root phase down, joined by "/".
func (n *FoldNode) Path() string { return n.path }

// Depth is 1 for a root phase.
func (n *FoldNode) Depth() int { return n.depth }

// Names lists the names from the root phase down. Names may themselves
// contain "/", so this walks the chain rather than splitting the path.
func (n *FoldNode) Names() []string {
	names := make([]string, n.depth)
	for q, i := n, n.depth-1; q != nil && i >= 0; q, i = q.parent, i-1 {
		names[i] = q.name
	}
	return names
}

// Child is the node of the phase called name under n, made on first use.
func (n *FoldNode) Child(name string) *FoldNode {
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
	c := &FoldNode{name: name, parent: n, depth: n.depth + 1, path: name}
	if n.depth > 0 {
		c.path = n.path + "/" + name
	}
	n.children = append(n.children, c)
	if n.byName != nil {
		n.byName[name] = c
	} else if len(n.children) > 8 {
		n.byName = make(map[string]*FoldNode, len(n.children))
		for _, x := range n.children {
			n.byName[x.name] = x
		}
	}
	return c
}

// Folder folds a build's phase instances as they finish, and keeps the
// slowest few of them. Its memory is bounded by the number of distinct phase
// paths plus the instances kept.
type Folder struct {
	root    FoldNode
	keep    int
	slowest instanceHeap
}

// NewFolder keeps the keep slowest instances (none when keep <= 0).
func NewFolder(keep int) *Folder { return &Folder{keep: keep} }

// Root is the nameless node above the build's root phases.
func (f *Folder) Root() *FoldNode { return &f.root }

// Add folds one instance of n's phase. end < 0 means it never finished: it
// counts until buildEnd.
func (f *Folder) Add(n *FoldNode, start, end, buildEnd time.Duration, done, steps int) {
	finished := end >= 0
	if !finished {
		end = buildEnd
	}
	d := max(end-start, 0)
	if n.count == 0 || d < n.min {
		n.min = d
	}
	if n.count == 0 || start < n.first {
		n.first = start
	}
	n.max, n.last = max(n.max, d), max(n.last, end)
	n.count++
	n.total += d
	n.done += int64(done)
	n.steps += int64(steps)
	if !finished {
		n.open++
	}
	f.keepIfSlow(slowInstance{node: n, start: start, end: end, finished: finished})
}

func (f *Folder) keepIfSlow(in slowInstance) {
	if f.keep <= 0 {
		return
	}
	if len(f.slowest) < f.keep {
		heap.Push(&f.slowest, in)
		return
	}
	if f.slowest[0].less(in) {
		f.slowest[0] = in
		heap.Fix(&f.slowest, 0)
	}
}

// Tree exports the folded tree and the slowest instances, slowest first,
// in milliseconds.
func (f *Folder) Tree() ([]*PhaseNode, []PhaseInstance) {
	return exportNodes(f.root.children), f.exportSlowest()
}

func exportNodes(ns []*FoldNode) []*PhaseNode {
	if len(ns) == 0 {
		return nil
	}
	out := make([]*PhaseNode, len(ns))
	for i, n := range ns {
		last := n.last.Milliseconds()
		if n.open > 0 {
			last = -1
		}
		out[i] = &PhaseNode{
			Name: n.name, Count: n.count, Unfinished: n.open,
			TotalMs: n.total.Milliseconds(), MinMs: n.min.Milliseconds(), MaxMs: n.max.Milliseconds(),
			FirstStartMs: n.first.Milliseconds(), LastEndMs: last,
			Done: n.done, Steps: n.steps, Children: exportNodes(n.children),
		}
	}
	return out
}

func (f *Folder) exportSlowest() []PhaseInstance {
	if len(f.slowest) == 0 {
		return nil
	}
	kept := slices.Clone(f.slowest)
	slices.SortFunc(kept, func(a, b slowInstance) int {
		if a.less(b) {
			return 1
		}
		if b.less(a) {
			return -1
		}
		return 0
	})
	out := make([]PhaseInstance, len(kept))
	for i, in := range kept {
		end := in.end.Milliseconds()
		if !in.finished {
			end = -1
		}
		out[i] = PhaseInstance{Path: in.node.Names(), StartMs: in.start.Milliseconds(), EndMs: end,
			DurationMs: (in.end - in.start).Milliseconds()}
	}
	return out
}

// slowInstance is a kept instance; the heap's top is the least slow.
type slowInstance struct {
	node       *FoldNode
	start, end time.Duration
	finished   bool
}

// less orders by duration, and among equals the later start first, so the
// earliest of equally slow instances are the ones kept.
func (a slowInstance) less(b slowInstance) bool {
	da, db := a.end-a.start, b.end-b.start
	if da != db {
		return da < db
	}
	if a.start != b.start {
		return a.start > b.start
	}
	return strings.Compare(a.node.path, b.node.path) > 0
}

type instanceHeap []slowInstance

func (h instanceHeap) Len() int           { return len(h) }
func (h instanceHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h instanceHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *instanceHeap) Push(x any)        { *h = append(*h, x.(slowInstance)) }
func (h *instanceHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// FoldInstances folds an every-instance tree (a version 1 report, or one
// written with --report-detail full) the way the supervisor folds a build
// as it runs.
func FoldInstances(phases []*Phase, buildMs int64, keep int) ([]*PhaseNode, []PhaseInstance) {
	f := NewFolder(keep)
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	var walk func(into *FoldNode, phases []*Phase)
	walk = func(into *FoldNode, phases []*Phase) {
		for _, p := range phases {
			if p == nil {
				continue
			}
			n := into.Child(p.Name)
			end := ms(p.EndMs)
			if p.EndMs < 0 {
				end = -1
			}
			walk(n, p.Children)
			f.Add(n, ms(p.StartMs), end, ms(buildMs), p.Done, p.Steps)
		}
	}
	walk(f.Root(), phases)
	return f.Tree()
}

// Folded is the build's folded phase tree: the report's own, or folded from
// its every-instance tree when it has only that.
func (b *Build) Folded() []*PhaseNode {
	if b.digest != nil {
		return b.digest.tree()
	}
	return foldedOf(b.PhaseTree, b.Phases, b.DurationMs)
}

// Folded is the TensorRT build's folded phase tree, as Build.Folded is a
// build's. A script build the report settled keeps its TensorRT builds
// without their trees (Settle); its encoding has them.
func (t *TensorRTBuild) Folded() []*PhaseNode {
	return foldedOf(t.PhaseTree, t.Phases, t.EndMs())
}

// EndMs is when the TensorRT build ended, on the clock its start and its
// phases' times are on: the script build's, from that build's start.
func (t *TensorRTBuild) EndMs() int64 { return t.StartMs + t.DurationMs }

func foldedOf(tree []*PhaseNode, phases []*Phase, durationMs int64) []*PhaseNode {
	if tree != nil || len(phases) == 0 {
		return tree
	}
	tree, _ = FoldInstances(phases, durationMs, 0)
	return tree
}
