package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// Builds with run: in the engine cache, with the fake program (the test
// binary) as their command: it declares two engines and a config.json,
// its input is a file in its workdir.

// declaredFiles are what cachedScript declares, relative to its workdir.
var declaredFiles = []string{"out/rank0.engine", "out/rank1.engine", "out/config.json"}

// cachedScript is a build with run: in workdir that declares
// declaredFiles and input.txt, and writes the files writes names (all of
// declaredFiles when none), each holding its name and content (read from
// content.txt, which is no input: its command line and environment are
// the same whatever content and workdir are, and so is its key).
func cachedScript(t *testing.T, workdir, content string, writes ...string) matrix.Build {
	t.Helper()
	if len(writes) == 0 {
		writes = declaredFiles
	}
	if err := os.WriteFile(filepath.Join(workdir, "content.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	b := scriptBuild(t, "llm", "ok", nil)
	s := b.Script
	s.Workdir, s.Workspace = workdir, workdir
	s.Engines = []string{filepath.Join(workdir, declaredFiles[0]), filepath.Join(workdir, declaredFiles[1])}
	s.Outputs = []string{filepath.Join(workdir, declaredFiles[2])}
	s.Inputs = []string{"input.txt"}
	s.Env = append(s.Env, "FAKE_WRITES="+strings.Join(writes, string(os.PathListSeparator)), "FAKE_CONTENT=content.txt")
	return b
}

// scriptWorkdir is a workdir with its input, holding input.
func scriptWorkdir(t *testing.T, input string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input.txt"), []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cachedScriptRun runs builds with run: with the engine cache ec: each
// one's report entry as the report has it, and what the views were told.
func cachedScriptRun(t *testing.T, ec *EngineCache, builds ...matrix.Build) (map[string]report.Build, []event.Event) {
	t.Helper()
	opts := scriptOptions(t)
	opts.Cache = ec
	var events []event.Event
	opts.OnEvent = func(ev event.Event) { events = append(events, ev) }
	rep, cause := Run(builds, opts, nil)
	if cause != nil {
		t.Fatal(cause)
	}
	return byName(reporttest.ReadBack(t, rep)), events // as the written report has them
}

// ran reports whether the run started a command: its output or a
// TensorRT build inside it reached the views.
func ran(events []event.Event) bool {
	for _, ev := range events {
		if ev.Kind == event.Output || ev.Kind == event.InnerStarted {
			return true
		}
	}
	return false
}

// checkDelivered asserts that workdir holds every declared file with the
// content a command that wrote content gave it.
func checkDelivered(t *testing.T, workdir, content string) {
	t.Helper()
	for _, f := range declaredFiles {
		got, err := os.ReadFile(filepath.Join(workdir, f))
		if want := filepath.Base(f) + " " + content; err != nil || string(got) != want {
			t.Errorf("%s holds %q, %v; want %q", f, got, err, want)
		}
	}
}

// A build with run: that declares its inputs is cached: the second run
// starts no command and delivers both engines and the config.json, byte
// for byte; an input that changed builds again.
func TestAScriptBuildIsCachedOnTheSecondRun(t *testing.T) {
	workdir, cacheDir := scriptWorkdir(t, "checkpoint 1"), t.TempDir()
	first, events := cachedScriptRun(t, engineCache(t, cacheDir), cachedScript(t, workdir, "first"))
	b := first["llm"]
	if b.Status != report.StatusOK || b.Cache == nil || !b.Cache.Stored || len(b.Cache.Key) != 64 || !ran(events) {
		t.Fatalf("first run: %s (%s), cache %+v", b.Status, b.Reason, b.Cache)
	}
	if len(b.Engines) != 2 || len(b.Outputs) != 1 || b.Outputs[0].Path != filepath.Join(workdir, "out/config.json") {
		t.Errorf("first run: engines %+v, outputs %+v", b.Engines, b.Outputs)
	}
	for _, f := range declaredFiles {
		if err := os.Remove(filepath.Join(workdir, f)); err != nil {
			t.Fatal(err)
		}
	}

	second, events := cachedScriptRun(t, engineCache(t, cacheDir), cachedScript(t, workdir, "second"))
	hit := second["llm"]
	if hit.Status != report.StatusCached || !hit.Cache.Hit || hit.Cache.Key != b.Cache.Key || hit.Cache.From != report.CacheFromLocal {
		t.Fatalf("second run: %s (%s), cache %+v; want a hit", hit.Status, hit.Reason, hit.Cache)
	}
	if ran(events) || hit.Script != nil {
		t.Error("a hit started the command")
	}
	checkDelivered(t, workdir, "first")
	if len(hit.Engines) != 2 || hit.Engines[1] != b.Engines[1] || len(hit.Outputs) != 1 || hit.Outputs[0] != b.Outputs[0] {
		t.Errorf("the hit's engines %+v and outputs %+v, want the first run's %+v %+v", hit.Engines, hit.Outputs, b.Engines, b.Outputs)
	}
	if hit.Cache.Original == nil || hit.Cache.Original.Script == nil || len(hit.Cache.Original.TensorRTBuilds) != 1 {
		t.Errorf("the hit's original build: %+v", hit.Cache.Original)
	}

	if err := os.WriteFile(filepath.Join(workdir, "input.txt"), []byte("checkpoint 2"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, events := cachedScriptRun(t, engineCache(t, cacheDir), cachedScript(t, workdir, "third"))
	if b := third["llm"]; b.Status != report.StatusOK || b.Cache.Hit || !b.Cache.Stored || !ran(events) {
		t.Errorf("after the input changed: %s, cache %+v; want built and stored", b.Status, b.Cache)
	}
	checkDelivered(t, workdir, "third")
}

// A command that writes one of its two engines fails, and nothing is
// stored; one that leaves its output from before is ok, and not stored
// (its cache says why); one that declares no inputs is never cached.
func TestAScriptBuildIsStoredOnlyWhole(t *testing.T) {
	workdir, cacheDir := scriptWorkdir(t, "x"), t.TempDir()
	got, _ := cachedScriptRun(t, engineCache(t, cacheDir), cachedScript(t, workdir, "c", "out/rank0.engine", "out/config.json"))
	if b := got["llm"]; b.Status != report.StatusFailed || !strings.Contains(b.Reason, "rank1.engine was not written") || b.Cache.Stored {
		t.Errorf("one engine of two: %s (%s), cache %+v; want failed, not stored", b.Status, b.Reason, b.Cache)
	}
	assertEmptyCache(t, cacheDir)

	if err := os.WriteFile(filepath.Join(workdir, "out/config.json"), []byte("from before"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, events := cachedScriptRun(t, engineCache(t, cacheDir), cachedScript(t, workdir, "c", "out/rank0.engine", "out/rank1.engine"))
	b := got["llm"]
	want := "output " + filepath.Join(workdir, "out/config.json") + " is left from before this build: the command did not write it"
	if b.Status != report.StatusOK || b.Cache.Stored || b.Cache.NotStored != want {
		t.Errorf("an output left from before: %s (%s), cache %+v; want ok, not stored, saying why", b.Status, b.Reason, b.Cache)
	}
	if !warned(events, report.CacheWarningPrefix+"not stored: "+want) {
		t.Error("no warning says why the build was not stored")
	}
	assertEmptyCache(t, cacheDir)

	none := cachedScript(t, workdir, "c")
	none.Script.Inputs = nil
	got, _ = cachedScriptRun(t, engineCache(t, cacheDir), none)
	if b := got["llm"]; b.Status != report.StatusOK || b.Cache == nil || b.Cache.KeyUnknown != cache.ErrNoInputs.Error() || b.Cache.Stored {
		t.Errorf("without inputs: %s, cache %+v; want ok, uncached, saying why", b.Status, b.Cache)
	}
	assertEmptyCache(t, cacheDir)
}

// A hit whose entry lost one of its engines is a miss: a warning, the
// command runs, and its files replace the entry.
func TestAScriptHitMissingAnEngineBuildsAgain(t *testing.T) {
	workdir, cacheDir := scriptWorkdir(t, "x"), t.TempDir()
	first, _ := cachedScriptRun(t, engineCache(t, cacheDir), cachedScript(t, workdir, "first"))
	key := first["llm"].Cache.Key
	if err := os.Remove(filepath.Join(cacheDir, cacheVersion, key[:2], key, "engine-2")); err != nil {
		t.Fatal(err)
	}
	got, events := cachedScriptRun(t, engineCache(t, cacheDir), cachedScript(t, workdir, "again"))
	b := got["llm"]
	if b.Status != report.StatusOK || b.Cache.Hit || !b.Cache.Stored || !ran(events) {
		t.Fatalf("%s, cache %+v; want built again and stored", b.Status, b.Cache)
	}
	if !warned(events, "its engine-2 file is missing") {
		t.Error("no warning named the lost engine")
	}
	checkDelivered(t, workdir, "again")
}

// The engine cache folder in a build's workdir is never one of its
// inputs, whatever its patterns say: "**" would read the entries the
// first run stored there, give every run a key of its own, and no run
// would ever hit.
func TestAScriptBuildsInputsLeaveTheCacheFolderOut(t *testing.T) {
	workdir := scriptWorkdir(t, "checkpoint")
	cacheDir := filepath.Join(workdir, ".trt-cache")
	build := func(content string) matrix.Build {
		b := cachedScript(t, workdir, content)
		b.Script.Inputs = []string{"**", "!out/**", "!content.txt"}
		return b
	}
	first, _ := cachedScriptRun(t, engineCache(t, cacheDir), build("first"))
	b := first["llm"]
	if b.Status != report.StatusOK || !b.Cache.Stored {
		t.Fatalf("first run: %s (%s), cache %+v", b.Status, b.Reason, b.Cache)
	}
	second, events := cachedScriptRun(t, engineCache(t, cacheDir), build("second"))
	if hit := second["llm"]; hit.Status != report.StatusCached || hit.Cache.Key != b.Cache.Key || ran(events) {
		t.Fatalf("second run: %s, cache %+v; want a hit of key %s", hit.Status, hit.Cache, b.Cache.Key)
	}
}

// Through the shared store: a runner's build with run: pushes its entry,
// every file of it, and another runner's (another cache folder, another
// checkout) takes all its files from the store, starting no command.
func TestAScriptBuildThroughTheSharedStore(t *testing.T) {
	for _, kind := range remotetest.StoreKinds {
		t.Run(kind, func(t *testing.T) {
			srv := &store{remotetest.StartStore(t, kind)}
			s := srv.open(t, "", 0)
			first, _ := cachedScriptRun(t, sharedCache(t, t.TempDir(), s, remote.ReadWrite), cachedScript(t, scriptWorkdir(t, "x"), "runner 1"))
			if b := first["llm"]; b.Status != report.StatusOK || !b.Cache.Stored || !b.Cache.Pushed {
				t.Fatalf("the first runner: %s (%s), cache %+v; want stored and pushed", b.Status, b.Reason, b.Cache)
			}
			other := scriptWorkdir(t, "x")
			got, events := cachedScriptRun(t, sharedCache(t, t.TempDir(), s, remote.ReadWrite), cachedScript(t, other, "runner 2"))
			b := got["llm"]
			if b.Status != report.StatusCached || b.Cache.From != report.CacheFromRemote || b.Cache.Transfer == nil || ran(events) {
				t.Fatalf("the second runner: %s (%s), cache %+v; want a hit from the store", b.Status, b.Reason, b.Cache)
			}
			checkDelivered(t, other, "runner 1")
		})
	}
}

// assertEmptyCache asserts that the cache folder has no entry.
func assertEmptyCache(t *testing.T, dir string) {
	t.Helper()
	c, err := cache.Open(cache.Options{Dir: dir, Look: true})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := c.List(); err != nil || len(l.Entries) != 0 {
		t.Errorf("the cache holds %d entries (%v), want none", len(l.Entries), err)
	}
}

// warned reports whether a warning holding text reached the views.
func warned(events []event.Event, text string) bool {
	for _, ev := range events {
		if ev.Kind == event.Warning && strings.Contains(ev.Message, text) {
			return true
		}
	}
	return false
}
