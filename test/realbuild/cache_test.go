package realbuild

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/report"
)

// The engine cache with real TensorRT-RTX builds: what a second run
// builds, what changes rebuild, and the cache folder shared, corrupted,
// bounded and read-only.

// cacheMatrix builds four models, one with its weights in external data.
// Paths are relative to the matrix file, so a test can copy the models and
// change them.
const cacheMatrix = `version: 1
defaults: {backend: tensorrt-rtx}
CACHE
builds:
  - {name: mlp, onnx: models/mlp.onnx, engine: out/mlp.engine}
  - {name: cnn, onnx: models/cnn.onnx, engine: out/cnn.engine}
  - name: dynamic
    onnx: models/dynamic.onnx
    engine: out/dynamic.engine
    shapes: {input: {min: [1, 64], opt: [4, 64], max: [8, 64]}}
  - {name: external, onnx: models/external.onnx, engine: out/external.engine}
`

var cacheBuilds = []string{"mlp", "cnn", "dynamic", "external"}

// workdir is a folder with copies of the test models, where runs share a
// cache folder.
type workdir struct {
	e   env
	dir string
	n   int // runs so far
}

func newWorkdir(t *testing.T, e env) *workdir {
	t.Helper()
	w := &workdir{e: e, dir: t.TempDir()}
	for _, f := range []string{"mlp.onnx", "cnn.onnx", "dynamic.onnx", "external.onnx", "external.weights"} {
		data, err := os.ReadFile(filepath.Join(e.models, f))
		if err != nil {
			prerequisite(t, "test model missing (%v); run scripts/make-test-models %s", err, e.models)
		}
		writeFile(t, filepath.Join(w.dir, "models", f), data)
	}
	return w
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w *workdir) path(rel string) string { return filepath.Join(w.dir, rel) }

// cacheRun is one finished build run in a workdir.
type cacheRun struct {
	code   int
	output string
	builds map[string]report.Build
	rep    report.Report
}

// build writes matrix (cacheMatrix when "") and runs it with args.
func (w *workdir) build(t *testing.T, matrix string, args ...string) cacheRun {
	t.Helper()
	cmd := w.buildCommand(t, context.Background(), matrix, args...)
	out, err := cmd.CombinedOutput()
	return w.finished(t, cmd, string(out), err)
}

func (w *workdir) buildCommand(t *testing.T, ctx context.Context, matrix string, args ...string) *exec.Cmd {
	t.Helper()
	if matrix == "" {
		matrix = strings.Replace(cacheMatrix, "CACHE", "", 1)
	}
	w.n++
	name := fmt.Sprintf("matrix-%d.yml", w.n)
	writeFile(t, w.path(name), []byte(matrix))
	cmd := w.e.command(ctx, append([]string{"build", "-f", w.path(name), "--report", w.path(fmt.Sprintf("report-%d.json", w.n))}, args...)...)
	cmd.Dir = w.dir
	return cmd
}

func (w *workdir) finished(t *testing.T, cmd *exec.Cmd, output string, err error) cacheRun {
	t.Helper()
	r := cacheRun{code: exitCode(t, err, output), output: output, builds: map[string]report.Build{}}
	reportPath := cmd.Args[slices.Index(cmd.Args, "--report")+1]
	r.rep = readReportAt(t, reportPath, output)
	for _, b := range r.rep.Builds {
		r.builds[b.Name] = b
	}
	return r
}

// readReportAt reads and strictly decodes the report at path; output is
// the run's, for the failure message.
func readReportAt(t *testing.T, path, output string) report.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report: %v\noutput:\n%s", err, output)
	}
	var rep report.Report
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("%s does not decode into report.Report: %v", path, err)
	}
	return rep
}

// statuses is each build's status, in cacheBuilds order: "ok cached ...".
func (r cacheRun) statuses(names ...string) string {
	var s []string
	for _, n := range names {
		s = append(s, r.builds[n].Status)
	}
	return strings.Join(s, " ")
}

// expect fails unless the run exited 0 and each build has its status.
func (r cacheRun) expect(t *testing.T, want map[string]string) {
	t.Helper()
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0; output:\n%s", r.code, r.output)
	}
	for _, name := range cacheBuilds {
		if b := r.builds[name]; b.Status != want[name] {
			t.Errorf("%s: %s (%s), want %s; output:\n%s", name, b.Status, b.Reason, want[name], r.output)
		}
	}
}

func allAre(status string) map[string]string {
	m := map[string]string{}
	for _, n := range cacheBuilds {
		m[n] = status
	}
	return m
}

// except is allAre(status) with the named builds ok: rebuilt.
func except(status string, rebuilt ...string) map[string]string {
	m := allAre(status)
	for _, n := range rebuilt {
		m[n] = report.StatusOK
	}
	return m
}

// flipByte changes one byte in the middle of a file: in the models here,
// a weight.
func flipByte(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	writeFile(t, path, data)
}

func TestCacheSecondRunIsAllCachedAndByteIdentical(t *testing.T) {
	w := newWorkdir(t, rtxEnv(t))
	first := w.build(t, "", "--cache", w.path("cache"))
	first.expect(t, allAre(report.StatusOK))
	engines := map[string][]byte{}
	for _, name := range cacheBuilds {
		b := first.builds[name]
		if b.Cache == nil || !b.Cache.Stored || len(b.Cache.Key) != 64 {
			t.Errorf("%s: cache %+v, want its engine stored under its key", name, b.Cache)
		}
		engines[name], _ = os.ReadFile(w.path("out/" + name + ".engine"))
	}
	second := w.build(t, "", "--cache", w.path("cache"))
	second.expect(t, allAre(report.StatusCached))
	for _, name := range cacheBuilds {
		b := second.builds[name]
		checkEngine(t, b, w.path("out/"+name+".engine"))
		if got, _ := os.ReadFile(w.path("out/" + name + ".engine")); !bytes.Equal(got, engines[name]) {
			t.Errorf("%s: the cached engine differs from the built one", name)
		}
		if b.Cache.Key != first.builds[name].Cache.Key || b.Cache.BuildMs != first.builds[name].DurationMs || b.Callbacks != 0 {
			t.Errorf("%s: hit %+v, %d callbacks; want the first run's key and time, no build", name, b.Cache, b.Callbacks)
		}
		if o := b.Cache.Original; o == nil || o.Library == "" || len(o.PhaseTree) == 0 {
			t.Errorf("%s: the hit does not keep the original build's report entry", name)
		}
	}
	if !strings.Contains(second.output, "■ ✅ 4 cached — 4 builds in") {
		t.Errorf("the headline does not count the hits:\n%s", second.output)
	}
	// --no-cache builds everything and leaves the cache (here the
	// matrix's) as it is.
	before := folderState(t, w.path("cache"))
	third := w.build(t, strings.Replace(cacheMatrix, "CACHE", "cache: {dir: cache}", 1), "--no-cache")
	third.expect(t, allAre(report.StatusOK))
	for _, name := range cacheBuilds {
		if third.builds[name].Cache != nil {
			t.Errorf("%s: --no-cache used the cache: %+v", name, third.builds[name].Cache)
		}
	}
	if after := folderState(t, w.path("cache")); after != before {
		t.Errorf("--no-cache changed the cache folder:\n%s\nthen\n%s", before, after)
	}
	t.Logf("first run %d ms, second %d ms", first.rep.DurationMs, second.rep.DurationMs)
}

// Changing one byte of a model, one byte of an external-data file, or one
// setting rebuilds exactly that build; renaming a build or changing its
// budget rebuilds nothing; --rebuild rebuilds what it names.
func TestCacheRebuildsExactlyWhatChanged(t *testing.T) {
	w := newWorkdir(t, rtxEnv(t))
	cacheDir := w.path("cache")
	w.build(t, "", "--cache", cacheDir).expect(t, allAre(report.StatusOK))

	flipByte(t, w.path("models/mlp.onnx"))
	w.build(t, "", "--cache", cacheDir).expect(t, except(report.StatusCached, "mlp"))

	flipByte(t, w.path("models/external.weights"))
	w.build(t, "", "--cache", cacheDir).expect(t, except(report.StatusCached, "external"))

	setting := strings.Replace(strings.Replace(cacheMatrix, "CACHE", "", 1),
		"{name: cnn, onnx: models/cnn.onnx, engine: out/cnn.engine}",
		"{name: cnn, onnx: models/cnn.onnx, engine: out/cnn.engine, opt-level: 2}", 1)
	w.build(t, setting, "--cache", cacheDir).expect(t, except(report.StatusCached, "cnn"))

	renamed := strings.Replace(setting, "name: dynamic", "name: dynamic-renamed", 1)
	renamed = strings.Replace(renamed, "{name: mlp, onnx: models/mlp.onnx, engine: out/mlp.engine}",
		"{name: mlp, onnx: models/mlp.onnx, engine: out/mlp.engine, budgets: {build: 7m, stall: 3m}}", 1)
	r := w.build(t, renamed, "--cache", cacheDir)
	if r.code != exitOK || r.statuses("mlp", "cnn", "dynamic-renamed", "external") != "cached cached cached cached" {
		t.Errorf("renamed and re-budgeted: exit %d, %s; want all cached\n%s", r.code, r.statuses("mlp", "cnn", "dynamic-renamed", "external"), r.output)
	}

	r = w.build(t, renamed, "--cache", cacheDir, "--rebuild", "dyn*", "--rebuild", "external")
	if got := r.statuses("mlp", "cnn", "dynamic-renamed", "external"); r.code != exitOK || got != "cached cached ok ok" {
		t.Errorf("--rebuild dyn*,external: exit %d, %s; want cached cached ok ok\n%s", r.code, got, r.output)
	}
	if b := r.builds["external"]; b.Cache == nil || !b.Cache.Rebuilt || !b.Cache.Stored || !b.Cache.Replaced {
		t.Errorf("a --rebuild build's cache use: %+v; want rebuilt, stored and replaced", b.Cache)
	}
}

// Two processes racing on one cache folder both succeed with valid
// engines, and leave a cache whose every entry checks out.
func TestCacheTwoProcessesRaceOnOneFolder(t *testing.T) {
	e := rtxEnv(t)
	a, b := newWorkdir(t, e), newWorkdir(t, e)
	cacheDir := filepath.Join(t.TempDir(), "cache")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmds := []*exec.Cmd{a.buildCommand(t, ctx, "", "--cache", cacheDir), b.buildCommand(t, ctx, "", "--cache", cacheDir)}
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = cmd.Wait() }()
	}
	wg.Wait()
	for i, w := range []*workdir{a, b} {
		r := w.finished(t, cmds[i], outs[i].String(), errs[i])
		if r.code != exitOK {
			t.Fatalf("process %d: exit %d\n%s", i+1, r.code, r.output)
		}
		for _, name := range cacheBuilds {
			if b := r.builds[name]; !report.Succeeded(b.Status) {
				t.Errorf("process %d, %s: %s (%s)", i+1, name, b.Status, b.Reason)
			}
			checkEngine(t, r.builds[name], w.path("out/"+name+".engine"))
		}
	}
	c, err := cache.Open(cache.Options{Dir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if _, bad, err := c.Verify(); err != nil || len(bad) != 0 {
		t.Errorf("after the race: %v, %v", bad, err)
	}
	if l, _ := c.List(); len(l.Entries) != len(cacheBuilds) {
		t.Errorf("%d entries after the race, want %d", len(l.Entries), len(cacheBuilds))
	}
	a.build(t, "", "--cache", cacheDir).expect(t, allAre(report.StatusCached))
}

// A corrupted entry is a warning; its build runs, and the others hit.
func TestCacheCorruptEntryIsRebuiltWithAWarning(t *testing.T) {
	w := newWorkdir(t, rtxEnv(t))
	cacheDir := w.path("cache")
	first := w.build(t, "", "--cache", cacheDir)
	first.expect(t, allAre(report.StatusOK))
	key := first.builds["cnn"].Cache.Key
	engine := filepath.Join(cacheDir, fmt.Sprintf("v%d", cache.FormatVersion), key[:2], key, "engine")
	data, err := os.ReadFile(engine)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	writeFile(t, engine, data)
	r := w.build(t, "", "--cache", cacheDir)
	r.expect(t, except(report.StatusCached, "cnn"))
	cnn := r.builds["cnn"]
	if len(cnn.Warnings) != 1 || !strings.Contains(cnn.Warnings[0], "corrupt") || !cnn.Cache.Stored {
		t.Errorf("cnn: warnings %q, cache %+v; want one about the corrupt entry, and the rebuilt engine stored", cnn.Warnings, cnn.Cache)
	}
	if !strings.Contains(r.output, "[cnn]") || !strings.Contains(r.output, "⚠ engine cache: cache entry") {
		t.Errorf("the log does not warn:\n%s", r.output)
	}
	checkEngine(t, cnn, w.path("out/cnn.engine"))
	w.build(t, "", "--cache", cacheDir).expect(t, allAre(report.StatusCached))
}

// Under max-size the least recently used entry goes (by use, not by
// when it was stored), and every build still succeeds.
func TestCacheEvictsTheLeastRecentlyUsedUnderMaxSize(t *testing.T) {
	w := newWorkdir(t, rtxEnv(t))
	sizing := w.build(t, "", "--cache", w.path("sizing"))
	sizing.expect(t, allAre(report.StatusOK))
	var total int64
	for _, name := range cacheBuilds {
		total += sizing.builds[name].Engine.Bytes
	}
	// Room for all engines but one byte: storing the last evicts one.
	limit := total - 1
	matrix := strings.Replace(cacheMatrix, "CACHE", fmt.Sprintf("cache: {dir: bounded, max-size: %d}", limit), 1)
	kept := func() []string {
		c, err := cache.Open(cache.Options{Dir: w.path("bounded")})
		if err != nil {
			t.Fatal(err)
		}
		listing, err := c.List()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var size int64
		for _, e := range listing.Entries {
			names, size = append(names, e.Build), size+e.DiskSize
		}
		if size > limit {
			t.Errorf("the cache holds %d bytes, over its max-size %d", size, limit)
		}
		slices.Sort(names)
		return names
	}
	// Stored in matrix order: storing external evicts mlp, stored first.
	w.build(t, matrix).expect(t, allAre(report.StatusOK))
	if got := strings.Join(kept(), " "); got != "cnn dynamic external" {
		t.Fatalf("entries after the first run: %s; want mlp evicted", got)
	}
	// Using dynamic and external, then cnn, leaves dynamic the least
	// recently used: building mlp again evicts it.
	for _, step := range []struct{ only, want string }{
		{"dynamic,external", "cached cached"}, {"cnn", "cached"}, {"mlp", "ok"},
	} {
		r := w.build(t, matrix, "--only", step.only)
		if got := r.statuses(strings.Split(step.only, ",")...); r.code != exitOK || got != step.want {
			t.Fatalf("--only %s: exit %d, %s; want %s\n%s", step.only, r.code, got, step.want, r.output)
		}
	}
	if got := strings.Join(kept(), " "); got != "cnn external mlp" {
		t.Errorf("entries after mlp was built again: %s; want dynamic, the least recently used, evicted", got)
	}
}

// A cache folder the run cannot write is used and never written, with one
// notice.
func TestCacheReadOnlyFolderIsUsedNeverWritten(t *testing.T) {
	w := newWorkdir(t, rtxEnv(t))
	cacheDir := w.path("cache")
	w.build(t, "", "--cache", cacheDir).expect(t, allAre(report.StatusOK))
	flipByte(t, w.path("models/mlp.onnx")) // a miss, which a writable cache would store
	readOnly(t, cacheDir)
	before := folderState(t, cacheDir)
	r := w.build(t, "", "--cache", cacheDir)
	r.expect(t, except(report.StatusCached, "mlp"))
	if b := r.builds["mlp"]; b.Cache == nil || b.Cache.Stored || len(b.Warnings) != 0 {
		t.Errorf("mlp: cache %+v, warnings %q; want not stored, no warning", b.Cache, b.Warnings)
	}
	if n := strings.Count(r.output, "is read-only"); n != 1 {
		t.Errorf("%d notices that the cache is read-only, want 1:\n%s", n, r.output)
	}
	if after := folderState(t, cacheDir); after != before {
		t.Errorf("the read-only cache changed:\n%s\nthen\n%s", before, after)
	}
}

// readOnly makes dir unwritable for the binary: permission bits for a
// user, a read-only bind mount for root (whom bits do not stop).
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := exec.Command("chmod", "-R", "a-w", dir).Run(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", dir).Run() })
		return
	}
	if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
		prerequisite(t, "as root, a read-only folder needs a bind mount: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", dir).CombinedOutput(); err != nil {
		prerequisite(t, "remounting %s read-only: %v: %s", dir, err, out)
	}
}

// folderState lists every file under dir with its size and modification
// time: two equal states mean nothing was written.
func folderState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s\n", p, info.Size(), info.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
