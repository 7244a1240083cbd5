// Package shard spreads a build matrix over several GitHub jobs and joins
// their reports again: Plan balances builds over shards by their baseline
// durations, and Merge joins the shards' reports.
package shard

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// defaultEstimate is a build's assumed duration when no baseline says
// anything about any build.
const defaultEstimate = 60 * time.Second

// Shard is one job's share of the matrix. Its JSON form is one entry of
// strategy.matrix.include, so a workflow reads matrix.shard, matrix.of and
// passes matrix.only to the build's --only.
type Shard struct {
	Index     int      `json:"shard"`      // 1-based
	Of        int      `json:"of"`         // number of shards
	Only      string   `json:"only"`       // --only value: names as escaped patterns, comma-separated (see joinOnly)
	Builds    int      `json:"builds"`     // number of builds in the shard
	EstimateS int64    `json:"estimate_s"` // estimated duration, whole seconds rounded up
	Names     []string `json:"-"`          // build names, in matrix file order
}

// Plan splits builds into at most shards shards of balanced estimated
// duration: longest build first, each to the least-loaded shard (the LPT
// rule, within 4/3 of the optimum). A build's estimate is its duration in the
// baseline when it succeeded there, else the median of the known durations,
// else defaultEstimate. Plan never returns an empty shard, because an empty
// --only would select every build; fewer builds than shards gives fewer
// shards. The result is deterministic for the same input.
func Plan(builds []matrix.Build, shards int, baseline *report.Report) []Shard {
	if len(builds) == 0 {
		return nil
	}
	shards = max(1, min(shards, len(builds)))
	est := estimates(builds, baseline)

	// Longest first; ties keep file order so the plan is stable.
	order := make([]int, len(builds))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return est[order[a]] > est[order[b]] })

	load := make([]time.Duration, shards)
	owner := make([]int, len(builds))
	for _, i := range order {
		s := leastLoaded(load)
		owner[i] = s
		load[s] += est[i]
	}

	out := make([]Shard, shards)
	for s := range out {
		out[s] = Shard{Index: s + 1, Of: shards, EstimateS: ceilSeconds(load[s])}
	}
	for i, b := range builds { // file order within each shard
		s := &out[owner[i]]
		s.Names = append(s.Names, b.Name)
	}
	for s := range out {
		out[s].Builds = len(out[s].Names)
		out[s].Only = joinOnly(out[s].Names)
	}
	return out
}

// leastLoaded returns the shard with the smallest load, the lowest index on ties.
func leastLoaded(load []time.Duration) int {
	best := 0
	for s := range load {
		if load[s] < load[best] {
			best = s
		}
	}
	return best
}

func estimates(builds []matrix.Build, baseline *report.Report) []time.Duration {
	known := baselineDurations(baseline)
	fallback := median(known)
	if fallback <= 0 {
		fallback = defaultEstimate
	}
	est := make([]time.Duration, len(builds))
	for i, b := range builds {
		if d, ok := known[b.Name]; ok {
			est[i] = d
		} else {
			est[i] = fallback
		}
	}
	return est
}

// baselineDurations maps build names to their build time in the baseline
// (report.BuildTime), counting only successful builds: a failed or stopped
// build's time says little about how long it takes. A cache hit counts
// with the time of the build that made its engine, so a plan made after a
// run of hits is the plan made after a run of builds: shards keep their
// builds, and each shard's part of the engine cache stays its own.
func baselineDurations(baseline *report.Report) map[string]time.Duration {
	known := map[string]time.Duration{}
	if baseline == nil {
		return known
	}
	for i := range baseline.Builds {
		if ms, ok := report.BuildTime(&baseline.Builds[i]); ok {
			known[baseline.Builds[i].Name] = time.Duration(ms) * time.Millisecond
		}
	}
	return known
}

func median(m map[string]time.Duration) time.Duration {
	if len(m) == 0 {
		return 0
	}
	ds := make([]time.Duration, 0, len(m))
	for _, d := range m {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2]
	}
	return (ds[n/2-1] + ds[n/2]) / 2
}

func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// GitHubMatrix renders shards as the JSON a workflow passes to
// strategy.matrix with fromJSON: {"include":[{"shard":1,...},...]}.
func GitHubMatrix(shards []Shard) ([]byte, error) {
	if shards == nil {
		shards = []Shard{}
	}
	return json.Marshal(struct {
		Include []Shard `json:"include"`
	}{shards})
}

// onlyMeta are the characters escaped in an --only list: the list separator
// and path.Match's pattern syntax, so every name matches only itself.
const onlyMeta = `\,*?[]`

// joinOnly joins build names into one --only value: each name is escaped so
// that, split with SplitOnly and matched with path.Match, it matches exactly
// that name, whatever characters it holds.
func joinOnly(names []string) string {
	escaped := make([]string, len(names))
	for i, n := range names {
		var sb strings.Builder
		for _, r := range n {
			if strings.ContainsRune(onlyMeta, r) {
				sb.WriteByte('\\')
			}
			sb.WriteRune(r)
		}
		escaped[i] = sb.String()
	}
	return strings.Join(escaped, ",")
}

// SplitOnly splits an --only value at newlines and at commas not escaped by
// a backslash, and trims spaces around each item. Items stay path.Match
// patterns: "\," inside one is a literal comma there too, which matters
// because build names may contain commas. Empty items are dropped.
func SplitOnly(s string) []string {
	var items []string
	var cur strings.Builder
	flush := func() {
		if item := strings.TrimSpace(cur.String()); item != "" {
			items = append(items, item)
		}
		cur.Reset()
	}
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			cur.WriteByte(s[i])
			cur.WriteByte(s[i+1])
			i++
		case s[i] == ',' || s[i] == '\n':
			flush()
		default:
			cur.WriteByte(s[i])
		}
	}
	flush()
	return items
}
