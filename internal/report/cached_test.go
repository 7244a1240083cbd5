package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/golden"
)

// hitBuild is a hit: taken from the cache in 80 ms, built two days
// before the sample report's run in 14m3s.
func hitBuild(name string, startMs int64) Build {
	orig := okBuild(name, 0, 843_000)
	return Build{
		Name: name, Backend: "tensorrt-rtx", Status: StatusCached, StartMs: startMs, DurationMs: 80,
		Engine: &Engine{Path: "out/" + name + ".engine", Bytes: 12_345_678, SHA256: "ab"},
		Cache: &CacheUse{Key: strings.Repeat("c", 64), Hit: true,
			BuiltAt: time.Date(2025, 2, 27, 9, 30, 0, 0, time.UTC), BuildMs: 843_000, Original: &orig},
	}
}

// cachedReport is a run of two builds, one hit and one miss stored in the cache.
func cachedReport() *Report {
	r := sampleReport()
	miss := okBuild("resnet-fp16", 0, 20_000)
	miss.Cache = &CacheUse{Key: strings.Repeat("a", 64), Stored: true}
	r.Builds = []Build{miss, hitBuild("bert-int8", 20_000)}
	r.DurationMs = 20_100
	return r
}

func TestSummaryWithCacheHitsGolden(t *testing.T) {
	golden.Check(t, "summary-cached.golden.md", Summary(cachedReport(), SummaryOptions{}))
}

// A --rebuild says in its row that the cache entry was replaced; a plain
// store, which every build of a first run makes, is not noted there. And
// the JUnit test cases say both. Before, nothing outside the JSON report
// told a rebuild that replaced the entry.
func TestRebuiltGolden(t *testing.T) {
	golden.Check(t, "summary-rebuilt.golden.md", Summary(rebuiltReport(), SummaryOptions{}))
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, rebuiltReport()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "junit-rebuilt.golden.xml", buf.String())
}

func TestCacheStoreNote(t *testing.T) {
	for _, c := range []struct {
		use    CacheUse
		status string
		store  string
		rebuit string
	}{
		{CacheUse{Rebuilt: true, Stored: true, Replaced: true}, StatusOK, "rebuilt; cache entry replaced", "rebuilt; cache entry replaced"},
		{CacheUse{Rebuilt: true, Stored: true}, StatusOK, "rebuilt; stored in the cache", "rebuilt; stored in the cache"},
		{CacheUse{Rebuilt: true}, StatusOK, "rebuilt", "rebuilt"},
		{CacheUse{Stored: true}, StatusOK, "stored in the cache", ""},
		{CacheUse{}, StatusOK, "", ""},
		{CacheUse{Rebuilt: true}, StatusFailed, "", ""},
	} {
		b := Build{Status: c.status, Cache: &c.use}
		if got, rebuilt := CacheStoreNote(&b), RebuildNote(&b); got != c.store || rebuilt != c.rebuit {
			t.Errorf("%+v %s: CacheStoreNote %q, RebuildNote %q; want %q, %q", c.use, c.status, got, rebuilt, c.store, c.rebuit)
		}
	}
}

// The engine cache's warnings for builds that succeeded are noted in the
// summary, escaped; a build that did not succeed keeps them in its own
// section, and other warnings are not the cache's.
func TestSummaryNotesCacheWarningsGolden(t *testing.T) {
	r := cachedReport()
	r.Builds[0].Warnings = []string{
		CacheWarningPrefix + "the engine was not stored: engine out/<b>r|1</b>.engine is 2.1 GB with its metadata, larger than the cache's max-size 1.0 GB; not stored (raise max-size)",
		"not the cache's: budget warn at 80%",
		CacheWarningPrefix + "max-size 1.0 GB is too small for this run's engines: 1 engine stored in this run already evicted (built again next run); raise max-size",
	}
	fails := Build{Name: "*gpt* @team", Backend: "sim", Status: StatusFailed, Reason: "parse error",
		Warnings: []string{CacheWarningPrefix + "cache entry x is corrupt: wrong hash; removed"}}
	r.Builds = append(r.Builds, fails)
	golden.Check(t, "summary-cache-warnings.golden.md", Summary(r, SummaryOptions{}))
}

// The note quotes a few warnings and counts the rest.
func TestSummaryCacheWarningsAreBounded(t *testing.T) {
	b := okBuild("a", 0, 1000)
	for i := range maxCacheWarnings + 2 {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%swarning %d", CacheWarningPrefix, i))
	}
	note := cacheWarnings([]Build{b})
	if !strings.HasPrefix(note, "\n**Engine cache: 7 warnings**\n") || strings.Count(note, "- ⚠️ a: warning") != maxCacheWarnings ||
		!strings.HasSuffix(note, "- … and 2 more; see the JSON report.\n") {
		t.Errorf("note:\n%s", note)
	}
}

// A hit says what it saved, from the report's own start, and draws no
// phase: its original phases ran in another run.
func TestSummaryShowsWhatAHitSaved(t *testing.T) {
	s := Summary(cachedReport(), SummaryOptions{})
	if !strings.Contains(s, "| bert-int8 | ♻️ cached | tensorrt-rtx | 0.1s | cached: built 2 days ago in 14m3s |") {
		t.Errorf("no row for the hit saying what it saved:\n%s", s)
	}
	if strings.Contains(s, "section bert-int8") {
		t.Errorf("the timeline draws the hit's original phases:\n%s", s)
	}
	if strings.Contains(s, "### bert-int8") {
		t.Errorf("a hit is listed among the builds that did not succeed:\n%s", s)
	}
}

func TestHeadlineCountsHits(t *testing.T) {
	allHits := &Report{Complete: true, DurationMs: 400, Builds: []Build{hitBuild("a", 0), hitBuild("b", 0)}}
	failed := cachedReport()
	failed.Builds = append(failed.Builds, Build{Name: "c", Status: StatusFailed})
	for _, c := range []struct {
		r    *Report
		want string
	}{
		{cachedReport(), "✅ 1 ok, 1 cached — 2 builds in 20.1s"},
		{allHits, "✅ 2 cached — 2 builds in 0.4s"},
		{failed, "❌ 1 failed, 1 ok, 1 cached — 3 builds in 20.1s"},
	} {
		if got := Headline(c.r); got != c.want {
			t.Errorf("Headline = %q, want %q", got, c.want)
		}
	}
}

func TestCacheNote(t *testing.T) {
	hit := hitBuild("a", 0)
	runStart := hit.Cache.BuiltAt.Add(49 * time.Hour)
	noDate := hitBuild("a", 0)
	noDate.Cache.BuiltAt = time.Time{}
	miss := okBuild("a", 0, 1)
	miss.Cache = &CacheUse{Key: "k"}
	for _, c := range []struct {
		b    Build
		now  time.Time
		want string
	}{
		{hit, runStart, "cached: built 2 days ago in 14m3s"},
		{hit, time.Time{}, "cached: built 2025-02-27 09:30 UTC in 14m3s"},
		{noDate, runStart, "cached: built in 14m3s"},
		{miss, runStart, ""},
	} {
		if got := CacheNote(&c.b, c.now); got != c.want {
			t.Errorf("CacheNote = %q, want %q", got, c.want)
		}
	}
}

func TestBuildTimeOfAHitIsItsOriginalBuild(t *testing.T) {
	hit, ok := hitBuild("a", 0), okBuild("b", 0, 5_000)
	unknown := hitBuild("c", 0)
	unknown.Cache.BuildMs = 0
	failed := Build{Status: StatusFailed, DurationMs: 9}
	for _, c := range []struct {
		b     Build
		ms    int64
		known bool
	}{{hit, 843_000, true}, {ok, 5_000, true}, {unknown, 0, false}, {failed, 0, false}} {
		if ms, known := BuildTime(&c.b); ms != c.ms || known != c.known {
			t.Errorf("BuildTime(%s %s) = %d, %v; want %d, %v", c.b.Name, c.b.Status, ms, known, c.ms, c.known)
		}
	}
}

// A hit is a passing test case that says where its engine came from.
func TestJUnitHitPasses(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, cachedReport()); err != nil {
		t.Fatal(err)
	}
	x := buf.String()
	if strings.Contains(x, "<failure") || strings.Contains(x, "<skipped") {
		t.Errorf("a hit fails or skips:\n%s", x)
	}
	if !strings.Contains(x, "cached: built 2025-02-27 09:30 UTC in 14m3s (engine from the engine cache, key "+strings.Repeat("c", 64)+")") {
		t.Errorf("the hit's test case does not say it was cached:\n%s", x)
	}
}

// A settled hit keeps its original phase tree in the spool, not in memory,
// and the JSON report still has it.
func TestSettledHitKeepsItsOriginalInTheReport(t *testing.T) {
	r := cachedReport()
	r.KeepEncodings()
	hit := r.Builds[1]
	r.Settle(1, &hit)
	if r.Builds[1].Cache.Original != nil {
		t.Error("the settled hit still holds its original build in memory")
	}
	whole := wholeBuild(t, &r.Builds[1])
	if whole.Cache == nil || whole.Cache.Original == nil || len(whole.Cache.Original.Phases) == 0 {
		t.Fatalf("the encoded hit lost its original phases: %+v", whole.Cache)
	}
}
