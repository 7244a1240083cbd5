package build

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"

	"github.com/trt-action/trt-action/internal/text"
)

// Budget kinds, as reported in report.BudgetHit.Kind.
const (
	kindBuild = "build"
	kindStall = "stall"
	kindPhase = "phase"
	kindRun   = "run"
)

// phaseLimit is a phase budget attached to one phase instance.
type phaseLimit struct {
	pattern string
	limit   time.Duration
}

// limit is one time limit in force at a moment, on the build's clock.
type limit struct {
	kind     string
	phase    string // phase path, for phase limits
	leaf     string // the phase's own name
	pattern  string
	limit    time.Duration
	start    time.Duration // when the limited span began
	deadline time.Duration // start + limit
}

func (l limit) key() string { return l.kind + "\x00" + l.phase + "\x00" + fmt.Sprint(l.start) }

func (l limit) label() string {
	switch l.kind {
	case kindPhase:
		return "phase " + strconv.Quote(l.leaf)
	case kindStall:
		return "stall"
	case kindRun:
		return "run"
	}
	return "build"
}

// Budget decides, from a build's state and the time, whether a limit has run
// out, whether one deserves a warning, and when to look again. It is owned by
// the same goroutine as the build's State.
type Budget struct {
	spec    matrix.Budgets
	runLeft time.Duration // the run's budget left when the build started; 0 = none
	warned  map[string]bool
	matches map[string][]phaseLimit // phase budgets by phase path
}

// newBudget applies spec to one build. runLeft is what remains of the run's
// own budget when the build starts (0 when the run has none).
func newBudget(spec matrix.Budgets, runLeft time.Duration) *Budget {
	return &Budget{spec: spec, runLeft: runLeft, warned: map[string]bool{}, matches: map[string][]phaseLimit{}}
}

// Attach works out which phase budgets apply to a phase that just started.
func (b *Budget) Attach(p *phase) {
	if len(b.spec.Phases) == 0 {
		return
	}
	if cached, ok := b.matches[p.node.Path()]; ok {
		p.limits = cached
		return
	}
	names := p.names()
	var ls []phaseLimit
	for _, pb := range b.spec.Phases {
		if patternMatches(pb.Pattern, names) {
			ls = append(ls, phaseLimit{pattern: pb.Pattern, limit: pb.Limit})
		}
	}
	b.matches[p.node.Path()] = ls
	p.limits = ls
}

// patternMatches reports whether a phase budget's pattern names the phase
// whose chain of names (root first) is given. A name or glob matches the
// phase's own name. A path "A/B" matches a phase B that has an ancestor A,
// at any depth: "Building engine/Timing tactics" holds although TensorRT puts
// two phases between them.
func patternMatches(pattern string, names []string) bool {
	segs := strings.Split(pattern, "/")
	last := len(names) - 1
	if !nameMatches(segs[len(segs)-1], names[last]) {
		return false
	}
	i := last - 1
	for s := len(segs) - 2; s >= 0; s-- {
		for i >= 0 && !nameMatches(segs[s], names[i]) {
			i--
		}
		if i < 0 {
			return false
		}
		i--
	}
	return true
}

// nameMatches matches one name against a glob; a pattern that is not a valid
// glob matches only itself.
func nameMatches(glob, name string) bool {
	ok, err := path.Match(glob, name)
	return ok || (err != nil && glob == name)
}

// fromStart lists the limits that count from the build's start whatever
// it does: its own budget and what is left of the run's.
func (b *Budget) fromStart() []limit {
	var out []limit
	if b.spec.Build > 0 {
		out = append(out, limit{kind: kindBuild, limit: b.spec.Build, deadline: b.spec.Build})
	}
	if b.runLeft > 0 {
		out = append(out, limit{kind: kindRun, limit: b.runLeft, deadline: b.runLeft})
	}
	return out
}

// nearestFromStart is the nearer of the build's budget and the run's
// budget left (the build's on a tie); ok is false when neither applies.
// It bounds what a build does before its phases: reading its inputs for
// the engine cache key.
func (b *Budget) nearestFromStart() (l limit, ok bool) {
	for _, c := range b.fromStart() {
		if !ok || c.deadline < l.deadline {
			l, ok = c, true
		}
	}
	return l, ok
}

// limits lists every limit in force. now and lastSeen (when the newest
// callback arrived) are on the build's clock.
func (b *Budget) limits(s *State, lastSeen time.Duration) []limit {
	out := b.fromStart()
	if b.spec.Stall > 0 {
		out = append(out, limit{kind: kindStall, limit: b.spec.Stall, start: lastSeen, deadline: lastSeen + b.spec.Stall})
	}
	for _, stack := range s.running {
		for _, p := range stack {
			for _, pl := range p.limits {
				out = append(out, limit{kind: kindPhase, phase: p.node.Path(), leaf: p.name, pattern: pl.pattern,
					limit: pl.limit, start: p.start, deadline: p.start + pl.limit})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].deadline < out[j].deadline })
	return out
}

// verdict is what Check found.
type verdict struct {
	Hit      *report.BudgetHit // the limit that ran out first; nil if none
	Warnings []string          // limits that passed the warn percentage for the first time
}

// Check looks at every limit at time now.
func (b *Budget) Check(s *State, now, lastSeen time.Duration) verdict {
	var v verdict
	for _, l := range b.limits(s, lastSeen) {
		if now >= l.deadline && v.Hit == nil {
			v.Hit = &report.BudgetHit{Kind: l.kind, Phase: l.phase, Pattern: l.pattern,
				LimitMs: l.limit.Milliseconds(), ElapsedMs: (now - l.start).Milliseconds()}
		}
		if w, ok := b.warning(l, now); ok {
			v.Warnings = append(v.Warnings, w)
		}
	}
	return v
}

func (b *Budget) warnAt(l limit) time.Duration {
	return l.start + time.Duration(float64(l.limit)*b.spec.WarnPercent/100)
}

func (b *Budget) warning(l limit, now time.Duration) (string, bool) {
	if b.spec.WarnPercent <= 0 || now < b.warnAt(l) || b.warned[l.key()] {
		return "", false
	}
	b.warned[l.key()] = true
	return fmt.Sprintf("%s used %.0f%% of its %s limit (%s so far)",
		l.label(), float64(now-l.start)*100/float64(l.limit), l.limit, text.Precise(now-l.start)), true
}

// Next is the earliest moment at which Check could find something new: a
// deadline or a warning point not yet warned of. It can be at or before now
// (a deadline that passed since the last Check): check at once then. ok is
// false when no limit applies.
func (b *Budget) Next(s *State, now, lastSeen time.Duration) (next time.Duration, ok bool) {
	consider := func(t time.Duration) {
		if !ok || t < next {
			next, ok = t, true
		}
	}
	for _, l := range b.limits(s, lastSeen) {
		consider(l.deadline)
		if b.spec.WarnPercent > 0 && !b.warned[l.key()] {
			consider(b.warnAt(l))
		}
	}
	return next, ok
}

// Nearest is the time left to the closest deadline and which limit it is;
// left is -1 when no limit applies. The stall limit restarts with every
// callback, so it only counts once the build has been quiet for half of it.
func (b *Budget) Nearest(s *State, now, lastSeen time.Duration) (left time.Duration, name string) {
	for _, l := range b.limits(s, lastSeen) {
		if l.kind == kindStall && now-l.start < l.limit/2 {
			continue
		}
		return max(l.deadline-now, 0), l.label()
	}
	return -1, ""
}

// Use is the largest share of any limit used so far, in percent (0 when no
// limit applies); the summary shows it as budget use.
func (b *Budget) Use(s *State, now, lastSeen time.Duration) float64 {
	use := 0.0
	for _, l := range b.limits(s, lastSeen) {
		use = max(use, float64(now-l.start)*100/float64(l.limit))
	}
	return use
}
