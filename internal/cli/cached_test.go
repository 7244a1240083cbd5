package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
)

// A cache hit is a success for every --fail-on; it does not hide a
// failure or a blown budget beside it.
func TestExitForCountsHitsAsSuccess(t *testing.T) {
	hit := report.Build{Name: "h", Status: report.StatusCached}
	for _, c := range []struct {
		other  string
		failOn string
		want   int
	}{
		{report.StatusOK, failOnBudget, ExitOK},
		{report.StatusOK, failOnFailure, ExitOK},
		{report.StatusCached, failOnBudget, ExitOK},
		{report.StatusBudgetExceeded, failOnBudget, ExitBudget},
		{report.StatusFailed, failOnBudget, ExitFailed},
	} {
		r := &report.Report{Complete: true, Builds: []report.Build{hit, {Name: "o", Status: c.other}}}
		if got := exitCode(judge(r, c.failOn)); got != c.want {
			t.Errorf("hit and %s, --fail-on %s: exit %d, want %d", c.other, c.failOn, got, c.want)
		}
	}
}

// The step outputs count a hit as succeeded, and say how many were hits,
// and how many builds' entries the run pushed to the shared store.
func TestStepOutputsCountHits(t *testing.T) {
	dir := t.TempDir()
	outputFile := filepath.Join(dir, "github_output")
	c, _, _ := fanoutCommand(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": outputFile})
	o, err := c.newOutputs(outputs.Paths{Report: filepath.Join(dir, "r.json"), Summary: filepath.Join(dir, "s.md")})
	if err != nil {
		t.Fatal(err)
	}
	r := &report.Report{Version: report.SchemaVersion, Complete: true, Builds: []report.Build{
		{Name: "a", Status: report.StatusOK, Cache: &report.CacheUse{Stored: true, Pushed: true}}, {Name: "b", Status: report.StatusCached},
		{Name: "c", Status: report.StatusCached, Cache: &report.CacheUse{Hit: true, From: report.CacheFromLocal, Pushed: true}},
		{Name: "d", Status: report.StatusFailed}}}
	if err := o.Final(r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(outputFile)
	if err != nil {
		t.Fatal(err)
	}
	got := outputValues(t, string(data))
	if got["succeeded"] != "3" || got["failed"] != "1" || got["cached"] != "2" || got["stored"] != "1" || got["pushed"] != "2" {
		t.Errorf("outputs %v, want succeeded 3, failed 1, cached 2, stored 1, pushed 2 (a build and a hit the shared store lacked)", got)
	}
	declared(t, got)
}

// declared checks that both actions declare every step output the run
// writes: an output an action does not declare is not one of its outputs.
func declared(t *testing.T, values map[string]string) {
	t.Helper()
	for _, file := range []string{"../../action.yml", "../../action/composite/action.yml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var action struct {
			Outputs map[string]struct {
				Value string `yaml:"value"`
			} `yaml:"outputs"`
		}
		if err := yaml.Unmarshal(data, &action); err != nil {
			t.Fatal(err)
		}
		composite := strings.Contains(file, "composite")
		for name := range values {
			o, ok := action.Outputs[name]
			switch {
			case !ok:
				t.Errorf("%s does not declare the output %q", file, name)
			case composite && o.Value != "${{ steps.build.outputs."+name+" }}":
				t.Errorf("%s: output %q is %q, not the build step's", file, name, o.Value)
			}
		}
	}
}

// outputValues reads $GITHUB_OUTPUT's NAME<<DELIM records.
func outputValues(t *testing.T, data string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(data, "\n")
	for i := 0; i+2 < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var value []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			value = append(value, lines[i])
		}
		out[name] = strings.Join(value, "\n")
	}
	return out
}

// merge tells each shard's hits and misses, in its log and its summary: a
// shard whose part of the cache was lost shows.
func TestMergeReportsHitsAndMissesPerShard(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC)
	hit := func(name string) report.Build {
		return report.Build{Name: name, Backend: "sim", Status: report.StatusCached, DurationMs: 40,
			Cache: &report.CacheUse{Key: strings.Repeat("1", 64), Hit: true, BuildMs: 60_000}}
	}
	miss := report.Build{Name: "z", Backend: "sim", Status: report.StatusOK, DurationMs: 60_000,
		Cache: &report.CacheUse{Key: strings.Repeat("2", 64), Stored: true}}
	a := writeShard(t, dir, "a.json", t0, hit("x"), hit("y"))
	b := writeShard(t, dir, "b.json", t0, miss)
	summary := filepath.Join(dir, "s.md")
	c, _, errb := fanoutCommand(nil)
	if code := c.Main([]string{"merge", "--report", filepath.Join(dir, "m.json"), "--summary", summary, a, b}); code != ExitOK {
		t.Fatalf("exit %d, want 0\n%s", code, errb)
	}
	for _, want := range []string{"trt-action: shard 1: engine cache hits 2, misses 0 (2 builds)\n",
		"trt-action: shard 2: engine cache hits 0, misses 1 (1 build)\n"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("merge's log lacks %q:\n%s", want, errb)
		}
	}
	md, _ := os.ReadFile(summary)
	if !strings.Contains(string(md), "### Engine cache by shard\n\n| Shard | Builds | Hits | Misses |\n|--:|--:|--:|--:|\n| 1 | 2 | 2 | 0 |\n| 2 | 1 | 0 | 1 |\n") ||
		!strings.HasPrefix(string(md), "## ✅ 1 ok, 2 cached — 3 builds in") {
		t.Errorf("merged summary lacks the shards' cache use:\n%s", md)
	}
}

// Cache flags that contradict each other or would do nothing are refused,
// every problem at once, each naming the flag, its value and what is
// allowed.
func TestCacheFlagProblemsAreReportedAtOnce(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": "version: 1\nbuilds:\n  - {name: a, backend: sim}\n  - {name: b, backend: sim}\n"})
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"build", "--cache", "c", "--no-cache", "--rebuild", "a"}, nil,
			"trt-action: --cache \"c\" and --no-cache: give one (--no-cache runs without the cache; --cache names its folder)\n" +
				"trt-action: --rebuild a and --no-cache: give one (--no-cache already builds everything and stores nothing; --rebuild builds the named builds and stores their engines)\n"},
		{[]string{"build", "--rebuild", "a"}, nil,
			"trt-action: --rebuild a: there is no engine cache to bypass; turn it on with --cache DIR or cache: {dir: ...} in trt-builds.yml\n"},
		{[]string{"build", "--cache", "c", "--only", "a", "--rebuild", "b,x*"}, nil,
			"trt-action: --rebuild: trt-builds.yml: no build matches \"b\", \"x*\"; builds: a\n"},
		{[]string{"build"}, map[string]string{"INPUT_NO-CACHE": "maybe"},
			"trt-action: input \"no-cache\": \"maybe\" is not valid: want true or false\n"},
	} {
		c2, _, errb := fanoutCommand(c.env)
		if code := c2.Main(c.args); code != ExitInvalid {
			t.Errorf("%v %v: exit %d, want %d\n%s", c.args, c.env, code, ExitInvalid, errb)
		}
		if errb.String() != c.want {
			t.Errorf("%v %v:\n got %s\nwant %s", c.args, c.env, errb, c.want)
		}
	}
	if _, err := os.Stat("c"); err == nil {
		t.Error("a refused run created the cache folder")
	}
}

// plan --json gives each build's engine cache key, without the models
// where it can: a sim build's key, and for a model that is not there,
// null and the file it could not read.
func TestPlanJSONShowsKeys(t *testing.T) {
	dir := inDir(t, map[string]string{"trt-builds.yml": "version: 1\nbuilds:\n  - {name: a, backend: sim}\n  - {name: m, backend: tensorrt-rtx, onnx: absent.onnx}\n"})
	lib := filepath.Join(dir, "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"libtensorrt_rtx.so.1", "libtensorrt_onnxparser_rtx.so.1"} {
		if err := os.WriteFile(filepath.Join(lib, f), []byte("not really "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, out, errb := fanoutCommand(map[string]string{})
	t.Setenv("TRT_ACTION_RTX_LIB", lib)
	if code := c.Main([]string{"plan", "--json"}); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	var plan []struct {
		Name    string  `json:"name"`
		Key     *string `json:"cache_key"`
		Unknown string  `json:"cache_key_unknown"`
	}
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if plan[0].Key == nil || len(*plan[0].Key) != 64 || plan[0].Unknown != "" {
		t.Errorf("sim build: key %v (%s), want one", plan[0].Key, plan[0].Unknown)
	}
	if plan[1].Key != nil || !strings.Contains(plan[1].Unknown, "absent.onnx") {
		t.Errorf("build of a missing model: key %v, reason %q; want null naming the file", plan[1].Key, plan[1].Unknown)
	}
}

// plan --json names the shared store each key is looked up in, as a build
// run without --cache-remote would ask it (TRT_ACTION_CACHE_REMOTE over
// the matrix's), as Redact shows it.
func TestPlanJSONNamesTheStore(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": "version: 1\ncache: {dir: c, remote: 's3://engines/ci?endpoint=https://minio.example&region=eu'}\nbuilds:\n  - {name: a, backend: sim}\n"})
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "s3://engines/ci?endpoint=https://minio.example&region=eu"},
		{map[string]string{remoteEnv: "oci://ghcr.io/acme/engines"}, "oci://ghcr.io/acme/engines"},
	} {
		cmd, out, errb := fanoutCommand(c.env)
		if code := cmd.Main([]string{"plan", "--json"}); code != ExitOK {
			t.Fatalf("exit %d\n%s", code, errb)
		}
		var plan []struct {
			Remote string `json:"cache_remote"`
		}
		if err := json.Unmarshal(out.Bytes(), &plan); err != nil || len(plan) != 1 || plan[0].Remote != c.want {
			t.Errorf("%v: %+v, %v; want %s\n%s", c.env, plan, err, c.want, out)
		}
	}
}

// A matrix cache: with only max-size takes its folder from --cache (the
// size still holds); without --cache the run is refused at the key.
func TestCacheMaxSizeTakesTheFolderFromTheCommandLine(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": "version: 1\ncache: {max-size: 1GiB}\nbuilds:\n  - {name: a, backend: sim}\n"})
	for _, args := range [][]string{{"build"}, {"build", "--rebuild", "a"}} {
		c, _, errb := fanoutCommand(nil)
		if code := c.Main(args); code != ExitInvalid {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, ExitInvalid, errb)
		}
		const want = "trt-builds.yml:2:1: cache: no folder for the engine cache: give cache: {dir: ...}, --cache DIR or the action's cache input (or --no-cache)\n"
		if errb.String() != want {
			t.Errorf("%v:\n got %s\nwant %s", args, errb, want)
		}
	}
	if code, _, errb := runCacheCommand(t, "ls"); code != ExitInvalid || !strings.Contains(errb, "no cache folder: give --cache DIR") {
		t.Errorf("cache ls: exit %d, %s", code, errb)
	}

	file, err := matrix.Load("trt-builds.yml")
	if err != nil {
		t.Fatal(err)
	}
	c, _, errb := fanoutCommand(nil)
	flags := cacheFlags{dir: "c", remote: remoteFlags{pushTimeout: defaultPushTimeout}}
	if errs := flags.check(file, file.Builds, c.Getenv); len(errs) != 0 {
		t.Fatalf("--cache c: %v", errs)
	}
	ec, _, err := c.engineCache(&flags, file, file.Builds, "", nil)
	if err != nil || ec == nil || ec.Cache.Dir() != "c" || ec.Cache.MaxSize() != 1<<30 {
		t.Fatalf("--cache c with max-size 1GiB: %+v, %v\n%s", ec, err, errb)
	}
}

// --rebuild that names only builds running a command without inputs: is
// refused: they are never cached, so it would replace nothing.
func TestRebuildOfScriptBuildsIsRefused(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": "version: 1\nbuilds:\n  - {name: a, backend: sim}\n  - {name: s, backend: tensorrt, run: python build.py}\n"})
	c, _, errb := fanoutCommand(nil)
	if code := c.Main([]string{"build", "--cache", "c", "--rebuild", "s"}); code != ExitInvalid {
		t.Errorf("exit %d, want %d\n%s", code, ExitInvalid, errb)
	}
	if want := "--rebuild s: s run a command (run:) without inputs:, which is never cached"; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q, want %q", errb, want)
	}
}

// A build that runs a command has no engine path, and is no simulated
// stand-in: --backend sim's note counts only what it made.
func TestScriptBuildsAreNoSimulatedStandIns(t *testing.T) {
	builds := []matrix.Build{{Name: "s", Script: &matrix.Script{}}, {Name: "stand-in"}, {Name: "real", Engine: "a.engine"}}
	if n := simulatedStandIns(builds); n != 1 {
		t.Errorf("%d stand-ins, want 1", n)
	}
}
