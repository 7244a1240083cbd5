package build

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
	"github.com/trt-action/trt-action/internal/text"
)

// engineCache is an engine cache in dir for the simulator's builds.
func engineCache(t *testing.T, dir string, rebuild ...string) *EngineCache {
	t.Helper()
	c, err := cache.Open(cache.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return &EngineCache{Cache: c, Hasher: cache.NewHasher(),
		Env:     func(matrix.Build, string) (cache.Env, error) { return cache.Env{Library: backend.Sim}, nil },
		Rebuild: func(name string) bool { return strings.Contains(strings.Join(rebuild, ","), name) }}
}

// cachedRun runs builds with the engine cache ec and returns the report
// and the warnings the views were shown.
func cachedRun(t *testing.T, builds []matrix.Build, ec *EngineCache) (map[string]report.Build, []string) {
	t.Helper()
	rep, warnings := cachedReport(t, builds, ec)
	return byName(rep), warnings
}

// cachedReport runs builds with the engine cache ec and returns the report
// and the run's warnings.
func cachedReport(t *testing.T, builds []matrix.Build, ec *EngineCache) (*report.Report, []string) {
	t.Helper()
	opts := testOptions(t)
	opts.Cache = ec
	var warnings []string
	opts.OnEvent = func(ev event.Event) {
		if ev.Kind == event.Warning {
			warnings = append(warnings, ev.Message)
		}
	}
	rep, cause := Run(builds, opts, nil)
	if cause != nil {
		t.Fatal(cause)
	}
	return rep, warnings
}

func twoSimBuilds(dir string) []matrix.Build {
	return []matrix.Build{simBuild(dir, "a", nil), simBuild(dir, "b", func(b *matrix.Build) { b.Sim.Threads = 2 })}
}

// A second run of unchanged builds starts no worker: each engine comes
// from the cache, byte for byte, and the report keeps the original build.
func TestSecondRunIsAllHits(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	first, _ := cachedRun(t, twoSimBuilds(dir), engineCache(t, cacheDir))
	engines := map[string][]byte{}
	for _, name := range []string{"a", "b"} {
		b := first[name]
		if b.Status != report.StatusOK || b.Cache == nil || !b.Cache.Stored || b.Cache.Hit || len(b.Cache.Key) != 64 {
			t.Fatalf("first run, %s: status %s, cache %+v; want ok and stored", name, b.Status, b.Cache)
		}
		engines[name], _ = os.ReadFile(b.Engine.Path)
	}
	if first["a"].Cache.Key == first["b"].Cache.Key {
		t.Error("builds with different settings share a key")
	}
	secondReport, warnings := cachedReport(t, twoSimBuilds(dir), engineCache(t, cacheDir))
	second, secondWhole := byName(secondReport), byName(reporttest.ReadBack(t, secondReport))
	for _, name := range []string{"a", "b"} {
		b := second[name]
		if b.Status != report.StatusCached || !b.Cache.Hit || b.Cache.Key != first[name].Cache.Key {
			t.Fatalf("second run, %s: status %s, cache %+v; want a hit on the first run's key", name, b.Status, b.Cache)
		}
		if b.Callbacks != 0 || len(b.Folded()) != 0 {
			t.Errorf("%s: a hit ran a worker (%d callbacks)", name, b.Callbacks)
		}
		if got, _ := os.ReadFile(b.Engine.Path); !bytes.Equal(got, engines[name]) || b.Engine.SHA256 != first[name].Engine.SHA256 {
			t.Errorf("%s: the hit's engine differs from the first run's", name)
		}
		whole := secondWhole[name] // a settled build's original is in the report's spool
		if o := whole.Cache.Original; b.Cache.BuildMs != first[name].DurationMs || b.Cache.BuiltAt.IsZero() ||
			o == nil || len(o.PhaseTree) == 0 || o.Log != nil {
			t.Errorf("%s: the hit does not keep its original build: %+v", name, whole.Cache)
		}
		checkSimEngine(t, name, b.Engine)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	assertNoPartials(t, dir)
}

// --rebuild builds the named build without asking the cache; the others
// still hit.
func TestRebuildSkipsTheLookupOnly(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	cachedRun(t, twoSimBuilds(dir), engineCache(t, cacheDir))
	got, _ := cachedRun(t, twoSimBuilds(dir), engineCache(t, cacheDir, "b"))
	if a := got["a"]; a.Status != report.StatusCached {
		t.Errorf("a: %s, want cached", a.Status)
	}
	if b := got["b"]; b.Status != report.StatusOK || !b.Cache.Rebuilt || b.Callbacks == 0 {
		t.Errorf("b: %s, cache %+v, %d callbacks; want rebuilt", b.Status, b.Cache, b.Callbacks)
	}
}

// A corrupt entry is a warning: the build runs, and its engine is stored
// again.
func TestCorruptEntryIsRebuiltWithAWarning(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	builds := twoSimBuilds(dir)[:1]
	first, _ := cachedRun(t, builds, engineCache(t, cacheDir))
	key := first["a"].Cache.Key
	// Replace (not edit: the installed engine may be a hard link to it)
	// the cached engine with one of the same size and other bytes.
	stored := filepath.Join(cacheDir, cacheVersion, key[:2], key, "engine")
	data, err := os.ReadFile(stored)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := os.Remove(stored); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stored, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, warnings := cachedRun(t, builds, engineCache(t, cacheDir))
	a := got["a"]
	if a.Status != report.StatusOK || a.Callbacks == 0 || !a.Cache.Stored {
		t.Errorf("after a corrupt entry: %s, %d callbacks, cache %+v; want built and stored", a.Status, a.Callbacks, a.Cache)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "is corrupt") || len(a.Warnings) != 1 {
		t.Errorf("warnings shown %q, in the report %q; want one about the corrupt entry", warnings, a.Warnings)
	}
	checkSimEngine(t, "a", a.Engine)
	if third, _ := cachedRun(t, builds, engineCache(t, cacheDir)); third["a"].Status != report.StatusCached {
		t.Errorf("the rebuilt engine was not stored: %s", third["a"].Status)
	}
}

// A max-size too small for one run's engines is told by every store that
// evicts an engine of the run, with what it evicted and the run's total so
// far: the last warning counts every engine of the run the cache lost (the
// cache keeps only the last; the rest are built again next run). Before,
// one warning at the first eviction said 1 where the run lost 2.
func TestEvictingTheRunsOwnEnginesIsCounted(t *testing.T) {
	dir := t.TempDir()
	builds := append(twoSimBuilds(dir), simBuild(dir, "c", func(b *matrix.Build) { b.Sim.Threads = 3 }))
	// Measure the entries in a cache without a limit, then allow one.
	unlimited := t.TempDir()
	cachedRun(t, builds, engineCache(t, unlimited))
	var largest int64
	entries, _ := filepath.Glob(filepath.Join(unlimited, cacheVersion, "*", "*"))
	for _, e := range entries {
		var size int64
		for _, f := range []string{"engine", "entry.json"} {
			if fi, err := os.Stat(filepath.Join(e, f)); err == nil {
				size += fi.Size()
			}
		}
		largest = max(largest, size)
	}
	if len(entries) != 3 || largest == 0 {
		t.Fatalf("%d entries, largest %d bytes", len(entries), largest)
	}
	room := largest * 3 / 2 // one entry, whatever this run's durations add to its metadata
	c, err := cache.Open(cache.Options{Dir: t.TempDir(), MaxSize: room})
	if err != nil {
		t.Fatal(err)
	}
	ec := engineCache(t, t.TempDir())
	ec.Cache = c
	got, warnings := cachedRun(t, builds, ec)
	var told []string
	for _, b := range got {
		told = append(told, b.Warnings...)
	}
	slices.Sort(told)
	if !slices.Equal(told, slices.Sorted(slices.Values(warnings))) {
		t.Errorf("warnings shown %q, in the report %q; want the same", warnings, told)
	}
	// Stores run side by side (3 jobs), so one store may evict two: the
	// counts add up to the run's 2, and the last total is 2.
	said := regexp.MustCompile(`^engine cache: max-size ` + regexp.QuoteMeta(text.Bytes(room)) +
		` is too small for this run's engines: storing this one evicted (\d) engines? stored in this run \((\d) so far\)`)
	sum, last := 0, ""
	for _, w := range warnings {
		m := said.FindStringSubmatch(w)
		if m == nil {
			t.Fatalf("warning %q does not match %s", w, said)
		}
		n, _ := strconv.Atoi(m[1])
		sum, last = sum+n, m[2]
	}
	if sum != 2 || last != "2" {
		t.Errorf("warnings %q count %d evicted, the last total %s; want 2 and 2", warnings, sum, last)
	}
	if n := ec.Cache.EvictedStored(); n != 2 {
		t.Errorf("the cache counted %d of the run's engines evicted, want 2", n)
	}
}

// A store that fails (here the staging folder is a file; a full disk fails
// the same way, part way through a write: internal/cache's
// TestStoreCleansUpAfterAFailedWrite) is a warning: the build stays ok, its
// engine is in place, and no entry is left.
func TestStoreFailureIsAWarning(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	ec := engineCache(t, cacheDir)
	staging := filepath.Join(cacheDir, cacheVersion, "tmp")
	if err := os.RemoveAll(staging); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(staging, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, warnings := cachedRun(t, twoSimBuilds(dir)[:1], ec)
	a := got["a"]
	if a.Status != report.StatusOK || a.Cache == nil || a.Cache.Stored {
		t.Errorf("a: %s, cache %+v; want ok and not stored", a.Status, a.Cache)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], report.CacheWarningPrefix+"the engine was not stored: ") ||
		len(a.Warnings) != 1 {
		t.Errorf("warnings shown %q, in the report %q; want one saying the engine was not stored", warnings, a.Warnings)
	}
	checkSimEngine(t, "a", a.Engine)
	if l, _ := ec.Cache.List(); len(l.Entries) != 0 {
		t.Errorf("%d entries after a failed store", len(l.Entries))
	}
}

// A key that cannot be computed costs the build its cache, never its
// result.
func TestUnknownKeyBuildsWithoutTheCache(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	ec := engineCache(t, cacheDir)
	ec.Env = func(matrix.Build, string) (cache.Env, error) { return cache.Env{}, errors.New("no library named") }
	got, _ := cachedRun(t, twoSimBuilds(dir)[:1], ec)
	if a := got["a"]; a.Status != report.StatusOK || a.Cache == nil || a.Cache.KeyUnknown != "no library named" || a.Cache.Stored {
		t.Errorf("a: %s, cache %+v; want ok, the reason kept, nothing stored", a.Status, a.Cache)
	}
	if l, _ := ec.Cache.List(); len(l.Entries) != 0 {
		t.Errorf("%d entries stored without a key", len(l.Entries))
	}
}

// A signal that comes while a build's model is hashed starts no worker.
func TestSignalWhileHashingStartsNoWorker(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	signals := make(chan os.Signal, 1)
	ec := engineCache(t, cacheDir)
	ec.Env = func(matrix.Build, string) (cache.Env, error) {
		signals <- os.Interrupt
		time.Sleep(300 * time.Millisecond) // the runner takes it meanwhile
		return cache.Env{Library: backend.Sim}, nil
	}
	opts := testOptions(t)
	opts.Cache = ec
	b := runReport(twoSimBuilds(dir)[:1], opts, signals).Builds[0]
	if b.Status != report.StatusCancelled || !strings.HasPrefix(b.Reason, "not started: interrupted by SIGINT") || b.Callbacks != 0 {
		t.Errorf("%s (%s), %d callbacks; want cancelled before its worker", b.Status, b.Reason, b.Callbacks)
	}
}

// A hit takes none of the build's time: limits its original build would
// have run out of do not touch it.
func TestHitTakesNoBuildBudget(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	cachedRun(t, twoSimBuilds(dir)[:1], engineCache(t, cacheDir))
	tight := twoSimBuilds(dir)[:1]
	tight[0].Budgets.Build, tight[0].Budgets.Stall = time.Nanosecond, time.Nanosecond // not in the key
	got, _ := cachedRun(t, tight, engineCache(t, cacheDir))
	if a := got["a"]; a.Status != report.StatusCached || a.Budget != nil {
		t.Errorf("a hit under a 1ns budget: %s (%s), budget %+v", a.Status, a.Reason, a.Budget)
	}
}

// A renamed build is a hit (its name is not in its key), and the engine
// it gets is byte for byte what building it under its new name makes: a
// stand-in engine holds nothing the key does not cover.
func TestRenamedBuildGetsTheEngineItWouldBuild(t *testing.T) {
	cacheDir := t.TempDir()
	cachedRun(t, []matrix.Build{simBuild(t.TempDir(), "before", nil)}, engineCache(t, cacheDir))
	renamed, _ := cachedRun(t, []matrix.Build{simBuild(t.TempDir(), "after", nil)}, engineCache(t, cacheDir))
	hit := renamed["after"]
	if hit.Status != report.StatusCached {
		t.Fatalf("the renamed build: %s, want cached", hit.Status)
	}
	fresh := runReport([]matrix.Build{simBuild(t.TempDir(), "after", nil)}, testOptions(t), nil).Builds[0]
	if fresh.Status != report.StatusOK {
		t.Fatalf("a fresh build: %s (%s)", fresh.Status, fresh.Reason)
	}
	got, _ := os.ReadFile(hit.Engine.Path)
	want, _ := os.ReadFile(fresh.Engine.Path)
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("the hit's engine %q differs from a fresh build's %q", got, want)
	}
}

// cacheVersion is the folder of the cache format entries are stored in.
var cacheVersion = fmt.Sprintf("v%d", cache.FormatVersion)

// hugeTrace is a sparse trace file of 16 GiB: hashing it for the key takes
// many seconds, and the build must never get that far.
func hugeTrace(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "huge.trace")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 16<<30); err != nil {
		t.Fatal(err)
	}
	return p
}

// A build whose key takes long to compute (a model of gigabytes; here a
// 16 GiB trace) is bounded while it is hashed, as it would be while it
// builds: its build budget ends it budget-exceeded, and a signal ends it
// cancelled, with no worker started either way. Before, the hashing read
// every byte first.
func TestHashingForTheKeyHonoursBudgetAndSignal(t *testing.T) {
	t.Run("budget", func(t *testing.T) {
		dir := t.TempDir()
		b := simBuild(dir, "huge", func(b *matrix.Build) {
			b.Sim.Trace = hugeTrace(t, dir)
			b.Budgets.Build = 200 * time.Millisecond
		})
		got, _ := cachedRun(t, []matrix.Build{b}, engineCache(t, t.TempDir()))
		h := got["huge"]
		if h.Status != report.StatusBudgetExceeded || h.Callbacks != 0 || h.Budget == nil || h.Budget.Kind != "build" ||
			!strings.Contains(h.Reason, "while its inputs were read for the engine cache key") {
			t.Errorf("%s (%s), %d callbacks, budget %+v; want budget-exceeded while hashing", h.Status, h.Reason, h.Callbacks, h.Budget)
		}
	})
	t.Run("signal", func(t *testing.T) {
		dir := t.TempDir()
		signals := make(chan os.Signal, 1)
		ec := engineCache(t, t.TempDir())
		ec.Env = func(matrix.Build, string) (cache.Env, error) {
			time.AfterFunc(100*time.Millisecond, func() { signals <- os.Interrupt })
			return cache.Env{Library: backend.Sim}, nil
		}
		opts := testOptions(t)
		opts.Cache = ec
		b := simBuild(dir, "huge", func(b *matrix.Build) { b.Sim.Trace = hugeTrace(t, dir) })
		h := runReport([]matrix.Build{b}, opts, signals).Builds[0]
		if h.Status != report.StatusCancelled || h.Callbacks != 0 || !strings.Contains(h.Reason, "interrupted by SIGINT (while its inputs were read") {
			t.Errorf("%s (%s), %d callbacks; want cancelled while hashing", h.Status, h.Reason, h.Callbacks)
		}
	})
}
