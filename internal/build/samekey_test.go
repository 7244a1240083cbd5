package build

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// sameKeyBuilds are two builds alike but for their names (and whatever
// mod changes that is not in the key), a slow one first.
func sameKeyBuilds(dir string, step time.Duration, mod func(first, second *matrix.Build)) []matrix.Build {
	builds := []matrix.Build{
		simBuild(dir, "first", func(b *matrix.Build) { b.Sim.Step = step }),
		simBuild(dir, "second", func(b *matrix.Build) { b.Sim.Step = step; b.Budgets.Build = time.Hour }),
	}
	if mod != nil {
		mod(&builds[0], &builds[1])
	}
	return builds
}

// sameKeyOptions runs the builds side by side, one per GPU, and makes the
// second (on GPU 1) ask for its key a moment later, so the first is the
// one building it.
func sameKeyOptions(t *testing.T, cacheDir string) Options {
	opts := testOptions(t)
	opts.GPUs = gpus.NewPool([]string{"0", "1"}, 1)
	opts.Cache = engineCache(t, cacheDir)
	opts.Cache.Env = func(_ matrix.Build, gpu string) (cache.Env, error) {
		if gpu == "1" {
			time.Sleep(200 * time.Millisecond)
		}
		return cache.Env{Library: backend.Sim}, nil
	}
	return opts
}

// Two builds of one run with one key are built once: the second waits for
// the first and takes its engine from the cache.
func TestSameKeyInOneRunIsBuiltOnce(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	rep := runReport(sameKeyBuilds(dir, 100*time.Microsecond, nil), sameKeyOptions(t, cacheDir), nil)
	first, second := rep.Builds[0], rep.Builds[1]
	if first.Status != report.StatusOK || !first.Cache.Stored || first.Callbacks == 0 {
		t.Fatalf("first: %s (%s), cache %+v; want built and stored", first.Status, first.Reason, first.Cache)
	}
	if second.Status != report.StatusCached || second.Callbacks != 0 || second.Cache.Key != first.Cache.Key {
		t.Fatalf("second: %s (%s), %d callbacks, cache %+v; want a hit on the first's key", second.Status, second.Reason, second.Callbacks, second.Cache)
	}
	a, _ := os.ReadFile(first.Engine.Path)
	b, _ := os.ReadFile(second.Engine.Path)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("engines differ: %q and %q", a, b)
	}
}

// When the build of the key ends without storing its engine (here a build
// budget, which is not in the key, stops it), the one waiting builds it.
func TestSameKeyBuiltAgainWhenTheFirstFails(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	// The first runs out after the second asked for its key (200ms), long
	// before its build would end (about 650ms).
	builds := sameKeyBuilds(dir, 100*time.Microsecond, func(first, _ *matrix.Build) { first.Budgets.Build = 400 * time.Millisecond })
	rep := runReport(builds, sameKeyOptions(t, cacheDir), nil)
	first, second := rep.Builds[0], rep.Builds[1]
	if first.Status != report.StatusBudgetExceeded || first.Cache.Stored {
		t.Fatalf("first: %s (%s), cache %+v; want its budget exceeded, nothing stored", first.Status, first.Reason, first.Cache)
	}
	if second.Status != report.StatusOK || second.Callbacks == 0 || !second.Cache.Stored {
		t.Fatalf("second: %s (%s), cache %+v; want built and stored", second.Status, second.Reason, second.Cache)
	}
	if end := first.StartMs + first.DurationMs; second.StartMs < end {
		t.Errorf("second started at %dms, before the first ended at %dms", second.StartMs, end)
	}
	checkSimEngine(t, "second", second.Engine)
}

// A signal or the run budget ends a build waiting for its key's build
// promptly, as a build not started.
func TestSameKeyWaitEndsLikeABuildNotStarted(t *testing.T) {
	for _, c := range []struct {
		name   string
		signal bool
		budget time.Duration
		reason string
	}{
		{"signal", true, 0, "not started: interrupted by SIGINT"},
		{"run budget", false, 600 * time.Millisecond, "not started: run budget 600ms exceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, cacheDir := t.TempDir(), t.TempDir()
			opts := sameKeyOptions(t, cacheDir)
			opts.RunBudget = c.budget
			signals := make(chan os.Signal, 1)
			if c.signal {
				time.AfterFunc(600*time.Millisecond, func() { signals <- os.Interrupt }) // the second waits by then
			}
			start := time.Now()
			rep := runReport(sameKeyBuilds(dir, time.Millisecond, nil), opts, signals) // the first alone would take seconds
			if took := time.Since(start); took > 4*time.Second {
				t.Errorf("the run took %v after a stop at 600ms", took)
			}
			second := rep.Builds[1]
			if second.Status != report.StatusCancelled || !strings.HasPrefix(second.Reason, c.reason) || second.Callbacks != 0 {
				t.Errorf("second: %s (%s), %d callbacks; want cancelled, %q", second.Status, second.Reason, second.Callbacks, c.reason)
			}
		})
	}
}

// backdateEntry rewrites k's metadata to say it was built in 2001, so a
// run can tell that entry from one stored since.
func backdateEntry(t *testing.T, cacheDir, k string) {
	t.Helper()
	meta := filepath.Join(cacheDir, cacheVersion, k[:2], k, "entry.json")
	data, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["built_at"] = "2001-01-01T00:00:00Z"
	data, _ = json.Marshal(m)
	if err := os.WriteFile(meta, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// --rebuild replaces the entry: a same-key build of the same run that
// asks later waits for the rebuilt engine and takes it, the report says
// the entry was replaced, and the next run finds the new entry. Before,
// the store returned early because the key was there (yet reported
// stored), so the second build and every later run got the old entry.
func TestRebuildReplacesTheEntryForTheRestOfTheRun(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	builds := sameKeyBuilds(dir, 100*time.Microsecond, nil)
	first := runReport(builds, sameKeyOptions(t, cacheDir), nil)
	key := first.Builds[0].Cache.Key
	backdateEntry(t, cacheDir, key)
	started := time.Now().UTC()
	opts := sameKeyOptions(t, cacheDir)
	opts.Cache.Rebuild = func(name string) bool { return name == "first" }
	rep := runReport(builds, opts, nil)
	rebuilt, second := rep.Builds[0], rep.Builds[1]
	if rebuilt.Status != report.StatusOK || rebuilt.Callbacks == 0 || !rebuilt.Cache.Rebuilt || !rebuilt.Cache.Stored || !rebuilt.Cache.Replaced {
		t.Fatalf("rebuilt: %s (%s), cache %+v; want built, stored and replaced", rebuilt.Status, rebuilt.Reason, rebuilt.Cache)
	}
	if second.Status != report.StatusCached || second.Cache.BuiltAt.Before(started) {
		t.Errorf("second: %s, cache %+v; want a hit on the entry rebuilt in this run (built after %s)", second.Status, second.Cache, started)
	}
	third := runReport(builds, sameKeyOptions(t, cacheDir), nil)
	for _, b := range third.Builds {
		if b.Status != report.StatusCached || b.Cache.BuiltAt.Before(started) {
			t.Errorf("next run, %s: %s, built at %s; want the rebuilt entry", b.Name, b.Status, b.Cache.BuiltAt)
		}
	}
}

// rebuildRun runs builds (rebuild names the --rebuild build; slowGPU is
// the GPU whose build is slow to ask for its key) over a cache whose
// entry for their shared key was built in 2001, the bad engine --rebuild
// is for, and returns the report and when the run started.
func rebuildRun(t *testing.T, builds []matrix.Build, rebuild string, jobs int, slowGPU string) (map[string]report.Build, time.Time) {
	t.Helper()
	cacheDir := t.TempDir()
	first := runReport(builds[:1], sameKeyOptions(t, cacheDir), nil)
	backdateEntry(t, cacheDir, first.Builds[0].Cache.Key)
	opts := testOptions(t)
	opts.Jobs = jobs
	opts.Cache = engineCache(t, cacheDir, rebuild)
	if jobs > 1 {
		opts.GPUs = gpus.NewPool([]string{"0", "1"}, 1)
	}
	opts.Cache.Env = func(_ matrix.Build, gpu string) (cache.Env, error) {
		if gpu == slowGPU {
			time.Sleep(200 * time.Millisecond)
		}
		return cache.Env{Library: backend.Sim}, nil
	}
	started := time.Now().UTC()
	return byName(runReport(builds, opts, nil)), started
}

// checkRebuilt fails unless b was built in this run and replaced the entry.
func checkRebuilt(t *testing.T, b report.Build) {
	t.Helper()
	if b.Status != report.StatusOK || b.Callbacks == 0 || !b.Cache.Rebuilt || !b.Cache.Replaced {
		t.Errorf("%s: %s (%s), cache %+v; want rebuilt, the entry replaced", b.Name, b.Status, b.Reason, b.Cache)
	}
}

// A same-key build never takes the entry --rebuild is for, whichever build
// hashes its model first: one listed after the rebuild waits for it and
// takes its engine, even when it asks for its key first (the review's
// reproduction: before, it claimed the key, and took the old engine as
// "cached"). One listed before the rebuild waits for it when the rebuild
// has started; when it has not (one job: it starts only when this build
// ends), that build is rebuilt too and replaces the entry.
func TestRebuildKeyIsNeverTakenFromTheOldEntry(t *testing.T) {
	dir := t.TempDir()
	builds := sameKeyBuilds(dir, 100*time.Microsecond, nil) // first, second: one key
	t.Run("listed after, hashing first", func(t *testing.T) {
		got, started := rebuildRun(t, builds, "first", 2, "0") // first gets GPU 0, and its key late
		checkRebuilt(t, got["first"])
		if second := got["second"]; second.Status != report.StatusCached || second.Cache.BuiltAt.Before(started) {
			t.Errorf("second: %s, built at %s; want the engine rebuilt in this run (after %s), not the old entry", second.Status, second.Cache.BuiltAt, started)
		}
	})
	t.Run("listed before, rebuild not started", func(t *testing.T) {
		got, _ := rebuildRun(t, builds, "second", 1, "")
		checkRebuilt(t, got["first"])
		checkRebuilt(t, got["second"]) // --rebuild names it: built, whatever the run built before
	})
	t.Run("listed before, rebuild started", func(t *testing.T) {
		got, started := rebuildRun(t, builds, "second", 2, "0") // first gets GPU 0, and asks late
		checkRebuilt(t, got["second"])
		if first := got["first"]; first.Status != report.StatusCached || first.Cache.BuiltAt.Before(started) {
			t.Errorf("first: %s, built at %s; want the engine rebuilt in this run (after %s)", first.Status, first.Cache.BuiltAt, started)
		}
	})
}

// The decision, build by build: a build of a key --rebuild is for waits
// for a rebuild listed before it even before the rebuild has begun its
// lookup (it was dispatched first and holds its slot; before, such a
// build was rebuilt too, about one run in five of the review's matrix),
// and for one listed after it only once that one has begun; otherwise it
// rebuilds. Once the key's entry was stored in the run, it asks the cache.
func TestSameKeyDecisions(t *testing.T) {
	k := cache.Key(strings.Repeat("a", 64))
	var s sameKey
	s.addRebuilder(1)
	s.planRebuild(1, k)
	if do, ch := s.claim(k, 2); do != wait || ch == nil {
		t.Fatalf("a build listed after the rebuild: %v; want it to wait", do)
	}
	if do, _ := s.claim(k, 0); do != rebuild {
		t.Fatalf("a build listed before a rebuild not started: %v; want it rebuilt", do)
	}
	s.release(k)
	s.start(1)
	if do, _ := s.claim(k, 0); do != wait {
		t.Fatalf("a build listed before a rebuild started: %v; want it to wait", do)
	}
	if do, _ := s.claim(k, 1); do != rebuild {
		t.Fatalf("the rebuild: %v", do)
	}
	if do, ch := s.claim(k, 2); do != wait || ch == nil {
		t.Fatalf("while the rebuild builds: %v; want a wait", do)
	}
	s.stored(k)
	s.release(k)
	if do, _ := s.claim(k, 2); do != ask {
		t.Fatalf("after the rebuild stored its engine: %v; want ask", do)
	}
}
