package report

import (
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// Headline is the run's outcome in one line, e.g. "✅ 5 of 5 builds ok in
// 42s", "❌ 1 failed, 1 over budget, 3 ok — 5 builds in 4m2s",
// "❌ run budget 1m exceeded: 1 over budget, 2 cancelled — 3 builds in 1m",
// "❌ 1 regression (resnet +41%), 2 ok — 2 builds in 9m",
// "✅ 12 ok, 8 cached — 20 builds in 14m3s",
// "✅ 2 ok, 8 cached (5 from the shared cache) — 10 builds in 3m1s" or
// "⏹ interrupted (SIGINT after 3m12s): 2 of 6 builds done — 2 ok".
func Headline(r *Report) string {
	count := map[string]int{}
	for i := range r.Builds {
		count[r.Builds[i].Status]++
	}
	total := len(r.Builds)
	done := total - count[StatusPending] - count[StatusRunning]
	var parts []string
	if reg := RegressionsText(r); reg != "" {
		parts = append(parts, reg) // it fails the run: first
	}
	labels := []struct{ status, label string }{
		{StatusCrashed, "crashed"}, {StatusKilled, "killed"}, {StatusFailed, "failed"},
		{StatusBudgetExceeded, "over budget"}, {StatusCancelled, "cancelled"}, {StatusOK, "ok"},
		{StatusCached, "cached"},
	}
	if r.Ended != "" { // finished, so these builds will never end
		labels = append(labels, struct{ status, label string }{StatusRunning, "never finished"},
			struct{ status, label string }{StatusPending, "never started"})
	}
	for _, s := range labels {
		if n := count[s.status]; n > 0 {
			part := fmt.Sprintf("%d %s", n, s.label)
			if pulled := SharedCacheUse(r).Hits; s.status == StatusCached && pulled > 0 {
				part += fmt.Sprintf(" (%d from %s)", pulled, SharedCache) // what the fleet built
			}
			parts = append(parts, part)
		}
	}
	outcome := strings.Join(parts, ", ")
	took := text.DurationMs(r.DurationMs)
	allOK := count[StatusOK]+count[StatusCached] == total && len(r.Regressions) == 0
	switch {
	case r.Interrupted != "":
		h := fmt.Sprintf("⏹ interrupted (%s): %d of %d builds done", r.Interrupted, done, total)
		if outcome != "" {
			h += " — " + outcome
		}
		return h
	case !r.Complete && r.Ended == "":
		return fmt.Sprintf("⏳ running: %d of %d builds done after %s", done, total, took)
	case total == 0:
		return "⚪ no builds ran"
	case r.Ended != "":
		icon := "❌"
		if allOK {
			icon = "✅"
		}
		return fmt.Sprintf("%s %s: %s — %s in %s", icon, r.Ended, outcome, text.Count(total, "build"), took)
	case allOK && count[StatusCached] > 0: // what was built and what the cache had
		return fmt.Sprintf("✅ %s — %s in %s", outcome, text.Count(total, "build"), took)
	case allOK:
		return fmt.Sprintf("✅ %d of %d builds ok in %s", total, total, took)
	default:
		return fmt.Sprintf("❌ %s — %s in %s", outcome, text.Count(total, "build"), took)
	}
}

// maxNamedRegressions bounds the builds a headline names.
const maxNamedRegressions = 3

// RegressionsText names the builds over the regression fail threshold, e.g.
// "2 regressions (resnet +41%, bert +30%)"; "" when there are none.
func RegressionsText(r *Report) string {
	if len(r.Regressions) == 0 {
		return ""
	}
	var named []string
	for _, g := range r.Regressions[:min(len(r.Regressions), maxNamedRegressions)] {
		what := g.Label()
		if g.Kind != "" {
			what += " " + g.Kind // "bert memory +25%"
		}
		named = append(named, fmt.Sprintf("%s %+.0f%%", what, g.Percent))
	}
	if len(r.Regressions) > maxNamedRegressions {
		named = append(named, "…")
	}
	return fmt.Sprintf("%s (%s)", text.Count(len(r.Regressions), "regression"), strings.Join(named, ", "))
}

// ReasonSuffix is ": reason" from the build's reason or, without one, its
// budget hit.
func ReasonSuffix(b *Build) string {
	reason := b.Reason
	if reason == "" && b.Budget != nil {
		reason = BudgetText(b.Budget)
	}
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// BudgetText says which limit ran out, e.g.
// `phase "Building engine/Timing tactics" ran 5m1s, over its 5m0s limit`,
// or "memory reached 9.1 GB, over its 8GiB limit".
func BudgetText(h *BudgetHit) string {
	limit, ran := text.PreciseMs(h.LimitMs), text.PreciseMs(h.ElapsedMs)
	switch h.Kind {
	case BudgetMemory, BudgetGPUMemory:
		what := "memory"
		if h.Kind == BudgetGPUMemory {
			what = "GPU memory"
		}
		return fmt.Sprintf("%s reached %s, over its %s limit", what, text.Bytes(h.PeakBytes), text.ExactSize(h.LimitBytes))
	case "phase":
		return fmt.Sprintf("phase %q ran %s, over its %s limit", h.Phase, ran, limit)
	case "stall":
		return fmt.Sprintf("no progress for %s, over the %s stall limit", ran, limit)
	default:
		return fmt.Sprintf("%s ran %s, over its %s limit", h.Kind, ran, limit)
	}
}
