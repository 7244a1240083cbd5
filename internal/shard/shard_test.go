package shard

import (
	"encoding/json"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

func builds(names ...string) []matrix.Build {
	out := make([]matrix.Build, len(names))
	for i, n := range names {
		out[i] = matrix.Build{Name: n, Backend: "sim"}
	}
	return out
}

func baselineOf(durations map[string]int64) *report.Report {
	r := &report.Report{Version: report.SchemaVersion, Complete: true}
	for _, n := range slices.Sorted(maps.Keys(durations)) {
		r.Builds = append(r.Builds, report.Build{Name: n, Status: report.StatusOK, DurationMs: durations[n]})
	}
	return r
}

func TestPlanBalancesByBaseline(t *testing.T) {
	// 100 + 20 + 20 + 20 + 20 + 20 seconds over two shards: the big build
	// alone on one shard is the only balanced plan (100 vs 100).
	bs := builds("a", "big", "b", "c", "d", "e")
	base := baselineOf(map[string]int64{"a": 20e3, "big": 100e3, "b": 20e3, "c": 20e3, "d": 20e3, "e": 20e3})
	got := Plan(bs, 2, base)
	if len(got) != 2 {
		t.Fatalf("want 2 shards, got %d", len(got))
	}
	want := []Shard{
		{Index: 1, Of: 2, Only: "big", Builds: 1, EstimateS: 100, Names: []string{"big"}},
		{Index: 2, Of: 2, Only: "a,b,c,d,e", Builds: 5, EstimateS: 100, Names: []string{"a", "b", "c", "d", "e"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Plan = %+v\nwant %+v", got, want)
	}
}

func TestPlanUsesMedianForUnknownBuilds(t *testing.T) {
	// Known: 10s, 30s, 50s -> median 30s for "new".
	bs := builds("x", "y", "z", "new")
	base := baselineOf(map[string]int64{"x": 10e3, "y": 30e3, "z": 50e3})
	base.Builds = append(base.Builds, report.Build{Name: "new", Status: report.StatusFailed, DurationMs: 999e3})
	got := Plan(bs, 1, base)
	if got[0].EstimateS != 10+30+50+30 {
		t.Errorf("estimate = %ds, want 120s (a failed baseline build counts as unknown)", got[0].EstimateS)
	}
}

func TestPlanWithoutBaselineSplitsEvenly(t *testing.T) {
	got := Plan(builds("a", "b", "c", "d", "e"), 2, nil)
	if got[0].Builds != 3 || got[1].Builds != 2 {
		t.Errorf("builds per shard = %d,%d, want 3,2", got[0].Builds, got[1].Builds)
	}
	if got[0].EstimateS != 3*int64(defaultEstimate/time.Second) {
		t.Errorf("estimate = %d", got[0].EstimateS)
	}
}

func TestPlanNeverEmitsEmptyShards(t *testing.T) {
	got := Plan(builds("a", "b"), 5, nil)
	if len(got) != 2 {
		t.Fatalf("want 2 shards for 2 builds, got %d", len(got))
	}
	for _, s := range got {
		if s.Only == "" || s.Of != 2 {
			t.Errorf("shard %+v", s)
		}
	}
	if Plan(nil, 3, nil) != nil {
		t.Error("no builds should give no shards")
	}
	if n := len(Plan(builds("a", "b"), 0, nil)); n != 1 {
		t.Errorf("0 shards should mean 1, got %d", n)
	}
}

func TestGitHubMatrixShape(t *testing.T) {
	out, err := GitHubMatrix(Plan(builds("a", "b", "c"), 2, nil))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Include []map[string]any `json:"include"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Include) != 2 {
		t.Fatalf("include = %s", out)
	}
	first := got.Include[0]
	for _, key := range []string{"shard", "of", "only", "builds", "estimate_s"} {
		if _, ok := first[key]; !ok {
			t.Errorf("entry lacks %q: %s", key, out)
		}
	}
	if _, ok := first["Names"]; ok {
		t.Errorf("Names must not reach the matrix JSON: %s", out)
	}
	empty, _ := GitHubMatrix(nil)
	if string(empty) != `{"include":[]}` {
		t.Errorf("empty matrix = %s", empty)
	}
}

func TestOnlyRoundTripMatchesExactlyItsNames(t *testing.T) {
	names := []string{"plain", "with,comma", "star*", "q?", "br[ack]et", `back\slash`, "spa ce"}
	items := SplitOnly(joinOnly(names))
	if len(items) != len(names) {
		t.Fatalf("SplitOnly(joinOnly) = %q", items)
	}
	for i, pattern := range items {
		for j, name := range names {
			ok, err := path.Match(pattern, name)
			if err != nil {
				t.Fatalf("pattern %q: %v", pattern, err)
			}
			if ok != (i == j) {
				t.Errorf("pattern %q matches %q = %v", pattern, name, ok)
			}
		}
	}
	if got := SplitOnly(" a , b*,,c\nd\r\n"); !reflect.DeepEqual(got, []string{"a", "b*", "c", "d"}) {
		t.Errorf("SplitOnly user list = %q", got)
	}
}

func shardReport(start time.Time, durMs int64, complete bool, bs ...report.Build) *report.Report {
	return &report.Report{Version: report.SchemaVersion, Tool: "trt-action test", Matrix: "trt-builds.yml",
		StartedAt: start, DurationMs: durMs, Complete: complete, Builds: bs}
}

func TestPlanThenMergeRoundTrip(t *testing.T) {
	bs := builds("a", "b", "c", "d", "e")
	plan := Plan(bs, 2, nil)
	t0 := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	var reports []*report.Report
	for i, s := range plan {
		// Each shard "builds" what its --only selects, starting i seconds later.
		var done []report.Build
		for _, b := range bs {
			if matchesAny(SplitOnly(s.Only), b.Name) {
				done = append(done, report.Build{Name: b.Name, Status: report.StatusOK, StartMs: 100, DurationMs: 1000})
			}
		}
		reports = append(reports, shardReport(t0.Add(time.Duration(i)*time.Second), 5000, true, done...))
	}
	merged, err := Merge(reports)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range merged.Builds {
		got = append(got, b.Name)
	}
	slices.Sort(got)
	if !reflect.DeepEqual(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("merged builds = %v", got)
	}
	if !merged.Complete || !merged.StartedAt.Equal(t0) {
		t.Errorf("merged complete=%v start=%v", merged.Complete, merged.StartedAt)
	}
	if merged.DurationMs != 6000 { // second shard starts 1s later and runs 5s
		t.Errorf("merged duration = %d, want 6000", merged.DurationMs)
	}
	last := merged.Builds[len(merged.Builds)-1]
	if last.StartMs != 1100 {
		t.Errorf("second shard's build start = %d, want 1100 (rebased)", last.StartMs)
	}
}

func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func TestMergeErrors(t *testing.T) {
	t0 := time.Now()
	a := shardReport(t0, 1, true, report.Build{Name: "x"})
	b := shardReport(t0, 1, true, report.Build{Name: "x"})
	if _, err := Merge([]*report.Report{a, b}); err == nil || !strings.Contains(err.Error(), `"x" is in report 1 and report 2`) {
		t.Errorf("duplicate build: err = %v", err)
	}
	if _, err := Merge(nil); err == nil {
		t.Error("no reports should be an error")
	}
	c := shardReport(t0, 1, true)
	c.Version = 99
	if _, err := Merge([]*report.Report{a, c}); err == nil || !strings.Contains(err.Error(), "schema version") {
		t.Errorf("version mismatch: err = %v", err)
	}
}

func TestMergeIncompleteShard(t *testing.T) {
	t0 := time.Now()
	a := shardReport(t0, 1, true, report.Build{Name: "a"})
	b := shardReport(t0, 1, false, report.Build{Name: "b"})
	b.Interrupted, b.Signal = "SIGTERM after 3s", report.SignalTerminate
	c := shardReport(t0, 1, false, report.Build{Name: "c"})
	c.Interrupted, c.Signal = "SIGINT after 4s", report.SignalInterrupt
	m, err := Merge([]*report.Report{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || m.Interrupted != "shard 2: SIGTERM after 3s; shard 3: SIGINT after 4s" || m.Signal != report.SignalTerminate {
		t.Errorf("complete=%v interrupted=%q signal=%q; want the first interrupted shard's signal", m.Complete, m.Interrupted, m.Signal)
	}
}

// A build of the matrix no shard reported is added as never started, and a
// merged report with builds that never ended says why it is incomplete
// (unless a signal or a run budget already does).
func TestAddMissingAndMarkUnfinished(t *testing.T) {
	r := &report.Report{Complete: true, Builds: []report.Build{{Name: "a", Status: report.StatusOK}}}
	AddMissing(r, []matrix.Build{{Name: "a"}, {Name: "b", Backend: "sim"}})
	if len(r.Builds) != 2 || r.Builds[1].Name != "b" || r.Builds[1].Status != report.StatusPending || !strings.HasPrefix(r.Builds[1].Reason, "missing: ") || r.Complete {
		t.Fatalf("after AddMissing: complete=%v %+v", r.Complete, r.Builds)
	}
	MarkUnfinished(r)
	if r.Ended != "merged from incomplete shard reports" {
		t.Errorf("ended %q", r.Ended)
	}
	running := &report.Report{Complete: true, Builds: []report.Build{{Name: "a", Status: report.StatusRunning}}}
	MarkUnfinished(running)
	if running.Complete || running.Ended == "" {
		t.Errorf("a running build left complete=%v ended=%q", running.Complete, running.Ended)
	}
	stopped := &report.Report{Interrupted: "SIGINT after 1s", Builds: []report.Build{{Name: "a", Status: report.StatusPending}}}
	MarkUnfinished(stopped)
	if stopped.Ended != "" {
		t.Errorf("an interrupted report got ended %q; the signal says why", stopped.Ended)
	}
}
