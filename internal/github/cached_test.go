package github

import (
	"testing"

	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// A hit is a success for the check run: no annotation, conclusion
// success, and the title counts it.
func TestCheckRunCountsHitsAsSuccess(t *testing.T) {
	r := runReport(map[string]int64{"resnet": 5_000})
	r.Builds = append(r.Builds, reporttest.CacheHit("bert", 840_000))
	if got := conclusionOf(r); got != "success" {
		t.Errorf("conclusionOf = %s, want success", got)
	}
	if got := annotations(r, nil); len(got) != 0 {
		t.Errorf("%d annotations for a run of an ok build and a hit", len(got))
	}
	if got, want := title(r), "2 of 2 builds succeeded (1 cached)"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
}

// The comment compares a hit with nothing (a lookup is not a build), and
// records the time of the build that made its engine, so the next run that
// builds it compares with a build.
func TestCommentHitIsNotAChangeAndRecordsItsBuildTime(t *testing.T) {
	r := runReport(map[string]int64{"resnet": 5_000})
	r.Builds = append(r.Builds, reporttest.CacheHit("bert", 840_000))
	if got := changes(r, map[string]int64{"bert": 840_000, "resnet": 5_000}); len(got) != 0 {
		t.Errorf("changes = %+v, want none: the hit is no 99%% faster build", got)
	}
	prev, ok := previousDurations(dataComment(r))
	if !ok || prev["bert"] != 840_000 || prev["resnet"] != 5_000 {
		t.Errorf("recorded %v, want bert at its original 840000 ms and resnet at 5000", prev)
	}
}
