package realbuild

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
	"github.com/trt-action/trt-action/internal/report"
)

// Builds with run: in the engine cache, with real programs building real
// TensorRT-RTX engines: testdata/build_engine.py (two engines and a
// config.json) in a Python environment of the test's own, and Polygraphy
// in the builder-script venv.

// ownVenv is a virtual environment of the test's own whose python imports
// what the builder-script venv has (a .pth file names its packages), and
// holds a distribution of its own, fake-dist 1.0, whose version a test
// changes as an upgrade would: what the cache key reads of the
// environment the command runs in.
type ownVenv struct {
	python string
	dist   string // fake-dist's METADATA
}

func newOwnVenv(t *testing.T, scripts string) ownVenv {
	t.Helper()
	root := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(scripts, "-m", "venv", "--without-pip", root).CombinedOutput(); err != nil {
		t.Fatalf("python -m venv: %v\n%s", err, out)
	}
	theirs, err := exec.Command(scripts, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").Output()
	if err != nil {
		t.Fatal(err)
	}
	sites, _ := filepath.Glob(filepath.Join(root, "lib", "python3*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("the new venv's site-packages: %v", sites)
	}
	if err := os.WriteFile(filepath.Join(sites[0], "builder-scripts.pth"), bytes.TrimSpace(theirs), 0o644); err != nil {
		t.Fatal(err)
	}
	v := ownVenv{python: filepath.Join(root, "bin", "python"), dist: filepath.Join(sites[0], "fake_dist-1.0.dist-info", "METADATA")}
	v.setVersion(t, "1.0")
	return v
}

// setVersion makes fake-dist's installed version version.
func (v ownVenv) setVersion(t *testing.T, version string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(v.dist), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v.dist, []byte("Metadata-Version: 2.1\nName: fake-dist\nVersion: "+version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// llmFiles are what the script build declares: two engines and the
// config.json written with them.
var llmFiles = []string{"out/llm.engine", "out/llm.engine.1", "out/config.json"}

// llmRun runs build_engine.py (copied into dir, its input) in v, with the
// engine cache in cacheDir, building two engines and a config.json;
// flags come before the declarations, args after the script's own.
func llmRun(t *testing.T, e scriptEnv, v ownVenv, dir, cacheDir string, flags []string, args ...string) (run, report.Build) {
	t.Helper()
	all := append(append([]string{"--cache", cacheDir}, flags...), "--input", "build.py",
		"--engine", llmFiles[0], "--engine", llmFiles[1], "--output", llmFiles[2])
	r := e.runScript(t, dir, all, append([]string{v.python, "build.py", "--out", llmFiles[0], "--builds", "2", "--layers", "6", "--config", llmFiles[2]}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.output)
	}
	return r, onlyBuild(t, r)
}

// readFiles reads dir's declared files, in order.
func readFiles(t *testing.T, dir string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, f := range llmFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// removeFiles removes dir's declared files, so a hit must put them back.
func removeFiles(t *testing.T, dir string) {
	t.Helper()
	for _, f := range llmFiles {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// copyScript copies build_engine.py into dir as build.py, the input.
func copyScript(t *testing.T, e scriptEnv, dir string) {
	t.Helper()
	b, err := os.ReadFile(e.script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "build.py"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A real builder script of two engines and a config.json is cached on
// its second run (no command: every file put back byte for byte, at
// once), and built again when its input, its command, an env: value or a
// package installed in its environment changes, and after the change
// cached again.
func TestAScriptBuildIsCachedAndRebuiltWhenWhatDecidesItChanges(t *testing.T) {
	e := newScriptEnv(t)
	v := newOwnVenv(t, e.python)
	dir, cacheDir := t.TempDir(), t.TempDir()
	copyScript(t, e, dir)
	_, first := llmRun(t, e, v, dir, cacheDir, nil)
	if first.Status != report.StatusOK || first.Cache == nil || !first.Cache.Stored || len(first.Engines) != 2 || len(first.Outputs) != 1 {
		t.Fatalf("first run: %s (%s), cache %+v, engines %+v, outputs %+v", first.Status, first.Reason, first.Cache, first.Engines, first.Outputs)
	}
	built := readFiles(t, dir)
	removeFiles(t, dir)

	_, hit := llmRun(t, e, v, dir, cacheDir, nil)
	if hit.Status != report.StatusCached || !hit.Cache.Hit || hit.Cache.Key != first.Cache.Key || hit.Script != nil || len(hit.TensorRTBuilds) != 0 {
		t.Fatalf("second run: %s, cache %+v, script %+v; want a hit that ran nothing", hit.Status, hit.Cache, hit.Script)
	}
	for i, got := range readFiles(t, dir) {
		if !bytes.Equal(got, built[i]) {
			t.Errorf("%s differs from what the build wrote", llmFiles[i])
		}
	}
	if hit.DurationMs >= first.DurationMs {
		t.Errorf("the hit took %d ms, the build %d ms", hit.DurationMs, first.DurationMs)
	}

	rebuilt := func(what string, flags []string, args ...string) {
		t.Helper()
		_, b := llmRun(t, e, v, dir, cacheDir, flags, args...)
		if b.Status != report.StatusOK || b.Cache.Hit || !b.Cache.Stored || b.Cache.Key == first.Cache.Key {
			t.Errorf("after %s: %s, cache %+v; want built again under another key", what, b.Status, b.Cache)
		}
		_, again := llmRun(t, e, v, dir, cacheDir, flags, args...)
		if again.Status != report.StatusCached || again.Cache.Key != b.Cache.Key {
			t.Errorf("after %s, a second time: %s, cache %+v; want its new entry", what, again.Status, again.Cache)
		}
	}
	rebuilt("the command changed", nil, "--opt-level", "0")
	rebuilt("an env: value changed", []string{"--env", "MODE=other"})
	v.setVersion(t, "1.1")
	rebuilt("an installed package's version changed", nil)
	v.setVersion(t, "1.0")
	f, err := os.OpenFile(filepath.Join(dir, "build.py"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "# an edit")
	f.Close()
	rebuilt("its input changed", nil)
}

// A script that writes one of the two engines it declares fails and
// stores nothing; an entry that lost one of its engines is a miss (a
// warning), built again and stored whole again.
func TestAScriptBuildIsStoredWholeOrNotAtAll(t *testing.T) {
	e := newScriptEnv(t)
	v := newOwnVenv(t, e.python)
	dir, cacheDir := t.TempDir(), t.TempDir()
	copyScript(t, e, dir)
	r := e.runScript(t, dir, []string{"--cache", cacheDir, "--input", "build.py", "--engine", "out/one.engine", "--engine", "out/never.engine"},
		v.python, "build.py", "--out", "out/one.engine")
	b := onlyBuild(t, r)
	if r.code == 0 || b.Status != report.StatusFailed || !strings.Contains(b.Reason, "never.engine was not written") || b.Cache.Stored {
		t.Fatalf("one engine of two: exit %d, %s (%s), cache %+v; want failed, not stored\n%s", r.code, b.Status, b.Reason, b.Cache, r.output)
	}
	if entries := cacheEntries(t, e, cacheDir); len(entries) != 0 {
		t.Fatalf("the cache holds %v after a build that failed", entries)
	}

	_, first := llmRun(t, e, v, dir, cacheDir, nil)
	key := first.Cache.Key
	if err := os.Remove(filepath.Join(cacheDir, fmt.Sprintf("v%d", cache.FormatVersion), key[:2], key, "engine-2")); err != nil {
		t.Fatal(err)
	}
	r, again := llmRun(t, e, v, dir, cacheDir, nil)
	if again.Status != report.StatusOK || again.Cache.Hit || !again.Cache.Stored || !strings.Contains(r.output, "its engine-2 file is missing") {
		t.Fatalf("an entry without its second engine: %s, cache %+v; want a warning and the build again\n%s", again.Status, again.Cache, r.output)
	}
	if _, hit := llmRun(t, e, v, dir, cacheDir, nil); hit.Status != report.StatusCached {
		t.Errorf("after it was stored again: %s", hit.Status)
	}
}

// cacheEntries are the keys cache ls lists in dir.
func cacheEntries(t *testing.T, e scriptEnv, dir string) []string {
	t.Helper()
	out, err := e.command(t.Context(), "cache", "ls", "--cache", dir, "--json").Output()
	if err != nil {
		t.Fatalf("cache ls: %v", err)
	}
	var keys []string
	for _, f := range strings.Split(string(out), `"key":"`)[1:] {
		keys = append(keys, f[:64])
	}
	return keys
}

// Through a shared store (a real registry, a real S3 gateway): a
// runner's script build pushes all its files, another runner (another
// cache folder, another checkout) takes them all from the store and runs
// nothing; when the store's entry lost an engine's bytes, a third runner
// refuses it, builds, and its files replace the store's entry.
func TestAScriptBuildThroughTheSharedStore(t *testing.T) {
	e := newScriptEnv(t)
	v := newOwnVenv(t, e.python)
	remotetest.EachStore(t, func(t *testing.T, st *remotetest.Store) {
		e := e.with(envPairs(st.Env)...)
		flags := []string{"--cache-remote", st.URL}

		runner := func(what string) (run, report.Build, string) {
			dir := t.TempDir()
			copyScript(t, e, dir)
			r, b := llmRun(t, e, v, dir, t.TempDir(), flags)
			t.Logf("%s: %s, cache %+v", what, b.Status, b.Cache)
			return r, b, dir
		}
		_, first, firstDir := runner("the first runner")
		if first.Status != report.StatusOK || !first.Cache.Pushed {
			t.Fatalf("the first runner: %s, cache %+v; want built and pushed", first.Status, first.Cache)
		}
		_, second, dir := runner("the second runner")
		if second.Status != report.StatusCached || second.Cache.From != report.CacheFromRemote || second.Script != nil {
			t.Fatalf("the second runner: %s, cache %+v; want a hit from the store, no command", second.Status, second.Cache)
		}
		built, got := readFiles(t, firstDir), readFiles(t, dir)
		for i := range built {
			if !bytes.Equal(built[i], got[i]) {
				t.Errorf("%s pulled differs from what the first runner built", llmFiles[i])
			}
		}

		if err := os.Remove(st.BlobFile(t, first.Engines[1].SHA256)); err != nil {
			t.Fatal(err)
		}
		r, third, _ := runner("the third runner")
		if third.Status != report.StatusOK || third.Cache.Hit || !third.Cache.Pushed || !strings.Contains(r.output, "was refused") {
			t.Fatalf("the third runner: %s, cache %+v; want the entry refused, built and pushed in its place\n%s", third.Status, third.Cache, r.output)
		}
		if _, fourth, _ := runner("the fourth runner"); fourth.Status != report.StatusCached || fourth.Cache.From != report.CacheFromRemote {
			t.Errorf("after the entry was replaced: %s, cache %+v", fourth.Status, fourth.Cache)
		}
	})
}

// envPairs is env as NAME=value pairs.
func envPairs(env remotetest.Env) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// Polygraphy, in the builder-script venv (its console script, whose #!
// names the venv's python: the key reads that environment's packages, and
// its library is the venv's tensorrt_rtx_libs), from a matrix file with
// inputs:: plan --json gives the key the build then has, and the second
// run is a hit that starts no command.
func TestPolygraphyConvertIsCached(t *testing.T) {
	e := newScriptEnv(t)
	out, err := exec.Command(e.python, "-c", "import onnx, os; print(os.path.dirname(onnx.__file__))").Output()
	if err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "backend", "test", "data", "light", "light_squeezenet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "squeezenet.onnx"), model, 0o644); err != nil {
		t.Fatal(err)
	}
	polygraphy := filepath.Join(filepath.Dir(e.python), "polygraphy")
	matrixFile := fmt.Sprintf(`version: 1
cache: {dir: .trt-cache}
builds:
  - name: squeezenet
    backend: tensorrt-rtx
    run: [%q, convert, squeezenet.onnx, -o, out/squeezenet.engine]
    engine: out/squeezenet.engine
    inputs: squeezenet.onnx
    env: {POLYGRAPHY_USE_TENSORRT_RTX: "1"}
`, polygraphy)
	if err := os.WriteFile(filepath.Join(dir, "trt-builds.yml"), []byte(matrixFile), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := exec.Command(e.bin, "plan", "--json")
	plan.Dir, plan.Env = dir, e.vars
	planned, err := plan.Output()
	if err != nil || !strings.Contains(string(planned), `"inputs":["squeezenet.onnx"]`) {
		t.Fatalf("plan --json: %v\n%s", err, planned)
	}
	runBuild := func() report.Build {
		t.Helper()
		cmd := exec.Command(e.bin, "build", "--report", "report.json")
		cmd.Dir, cmd.Env = dir, e.vars
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
		return onlyBuild(t, run{dir: dir})
	}
	first := runBuild()
	if first.Status != report.StatusOK || !first.Cache.Stored || !strings.Contains(string(planned), `"cache_key":"`+first.Cache.Key+`"`) {
		t.Fatalf("first run: %s (%s), cache %+v; want ok, stored under the key plan gave:\n%s", first.Status, first.Reason, first.Cache, planned)
	}
	built, err := os.ReadFile(filepath.Join(dir, "out", "squeezenet.engine"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "out", "squeezenet.engine")); err != nil {
		t.Fatal(err)
	}
	hit := runBuild()
	if hit.Status != report.StatusCached || hit.Cache.Key != first.Cache.Key || hit.Script != nil {
		t.Fatalf("second run: %s, cache %+v; want a hit", hit.Status, hit.Cache)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "out", "squeezenet.engine")); err != nil || !bytes.Equal(got, built) {
		t.Errorf("the hit's engine differs from the build's (%v)", err)
	}
	explain := exec.Command(e.bin, "cache", "key", "--explain")
	explain.Dir, explain.Env = dir, e.vars
	out, err = explain.Output()
	if err != nil || !hasLine(string(out), "script.program.python.distributions.polygraphy", "0.53.6") ||
		!hasLine(string(out), "script.program.python.interpreter", "("+e.python+")") || !hasLine(string(out), "script.inputs.squeezenet.onnx", "squeezenet.onnx)") {
		t.Errorf("cache key --explain: %v\n%s", err, out)
	}
}

// hasLine reports whether some line of text holds every one of parts.
func hasLine(text string, parts ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
