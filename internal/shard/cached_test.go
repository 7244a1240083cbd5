package shard

import (
	"testing"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// A plan made after a run of hits is the plan made after the run that
// built them: shards keep their builds, and so their part of the cache.
func TestPlanAfterHitsIsThePlanAfterBuilds(t *testing.T) {
	times := map[string]int64{"a": 90_000, "b": 60_000, "c": 30_000, "d": 30_000}
	built := baselineOf(times)
	hits := &report.Report{}
	for _, b := range built.Builds {
		hits.Builds = append(hits.Builds, reporttest.CacheHit(b.Name, b.DurationMs))
	}
	want := Plan(builds("a", "b", "c", "d"), 2, built)
	got := Plan(builds("a", "b", "c", "d"), 2, hits)
	for i := range want {
		if got[i].Only != want[i].Only {
			t.Errorf("shard %d after hits: %s, after builds: %s", i+1, got[i].Only, want[i].Only)
		}
	}
}
