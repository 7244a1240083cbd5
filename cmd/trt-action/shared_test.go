package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/actions/actionstest"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text/texttest"

	"go.yaml.in/yaml/v3"
)

// sharedMatrix is three simulated builds of 3 MiB engines behind a cache
// folder (given by --cache) and the shared store url.
func sharedMatrix(url string) string {
	return `version: 1
cache:
  remote: ` + url + `
defaults:
  backend: sim
  sim: {step: 0s, engine-size: 3MiB}
builds:
  - {name: resnet, engine: out/resnet.engine}
  - {name: bert, engine: out/bert.engine, sim: {threads: 2}}
  - {name: yolo, engine: out/yolo.engine, sim: {threads: 3}}
`
}

// actionsEnv is a GitHub Actions step's environment in dir: its outputs
// and summary files, and env's own variables.
func actionsEnv(dir string, env remotetest.Env) []string {
	return append([]string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "summary.md")}, envList(env)...)
}

// envList is env as NAME=VALUE words.
func envList(env remotetest.Env) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// stepOutput is one step output the run wrote (NAME<<DELIMITER records).
func stepOutput(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "output"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `<<(\S+)\n(.*)\n`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("no step output %s in\n%s", name, data)
	}
	return m[2]
}

// Two runners, one store: the first builds and pushes every engine, the
// second (an empty folder of its own) builds nothing; every output says
// so: the report (the store, its mode, each build's from, pushed and
// transfer), the step output pushed, the job summary, JUnit's
// properties and the event stream. A third run from a fork's pull
// request reads only, refusing an explicit read-write with a notice.
func TestTwoRunnersOneStore(t *testing.T) {
	reg := remotetest.StartRegistry(t, remotetest.RegistryOptions{})
	url := reg.URL("acme/engines")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), sharedMatrix(url))

	a := filepath.Join(dir, "a")
	os.MkdirAll(a, 0o755)
	out, err := command(dir, actionsEnv(a, reg.Env()), "build", "--cache", "runner-a", "--report", "a/r.json", "--comment", "off").CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Fatalf("runner a: exit %d\n%s", code, out)
	}
	ra := readReport(t, filepath.Join(dir, "a", "r.json"))
	if ra.Cache == nil || ra.Cache.Remote != url || ra.Cache.RemoteMode != "read-write" {
		t.Fatalf("runner a's report names no store: %+v", ra.Cache)
	}
	for _, b := range ra.Builds {
		if b.Status != report.StatusOK || b.Cache == nil || !b.Cache.Stored || !b.Cache.Pushed || b.Cache.Transfer == nil || b.Cache.Transfer.Bytes != 3<<20 {
			t.Errorf("runner a: %s: %s, %+v", b.Name, b.Status, b.Cache)
		}
	}
	if got := stepOutput(t, a, "pushed"); got != "3" {
		t.Errorf("runner a: pushed %q, want 3", got)
	}

	b := filepath.Join(dir, "b")
	os.MkdirAll(b, 0o755)
	if err := os.RemoveAll(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	out, err = command(dir, actionsEnv(b, reg.Env()), "build", "--cache", "runner-b", "--report", "b/r.json", "--junit", "b/j.xml", "--events", "b/events.jsonl", "--comment", "off").CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Fatalf("runner b: exit %d\n%s", code, out)
	}
	rb := readReport(t, filepath.Join(b, "r.json"))
	for _, bb := range rb.Builds {
		c := bb.Cache
		if bb.Status != report.StatusCached || c == nil || c.From != report.CacheFromRemote || c.Transfer == nil || c.Transfer.Direction != report.TransferPull || c.Transfer.Bytes != 3<<20 {
			t.Errorf("runner b built or took from elsewhere: %s: %s, %+v", bb.Name, bb.Status, c)
		}
	}
	if got := stepOutput(t, b, "pushed"); got != "0" {
		t.Errorf("runner b: pushed %q, want 0", got)
	}
	summary, _ := os.ReadFile(filepath.Join(b, "summary.md"))
	for _, want := range []string{"## ✅ 3 cached (3 from the shared cache) — 3 builds in", "cached: from the shared cache, built ", "**Shared engine cache:** " + url + " (read-write) — 3 builds from the shared cache (9.4 MB pulled in "} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("runner b's summary lacks %q:\n%s", want, summary)
		}
	}
	junit, _ := os.ReadFile(filepath.Join(b, "j.xml"))
	if !strings.Contains(string(junit), `<property name="trt-action.cache.from" value="remote"></property>`) {
		t.Errorf("JUnit has no property of the remote hit:\n%s", junit)
	}
	events, _ := os.ReadFile(filepath.Join(b, "events.jsonl"))
	if !bytes.Contains(events, []byte(`"type":"cache_transfer"`)) || !bytes.Contains(events, []byte(`"from":"remote"`)) {
		t.Errorf("the event stream has no transfer:\n%s", events)
	}
	for _, name := range []string{"resnet", "bert", "yolo"} {
		if !sameFile(t, filepath.Join(dir, "out", name+".engine"), filepath.Join(dir, "runner-a", cacheVersion)) {
			t.Errorf("runner b's %s engine is not the one runner a built", name)
		}
	}

	// A fork's pull request: read-only whatever is asked; a build of a key
	// the store lacks is built, stored in the folder, not pushed.
	fork := filepath.Join(dir, "fork")
	os.MkdirAll(fork, 0o755)
	event := filepath.Join(fork, "event.json")
	writeFile(t, event, `{"pull_request":{"number":5,"head":{"repo":{"full_name":"octocat/engines"}}}}`)
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), strings.Replace(sharedMatrix(url), "threads: 3", "threads: 5", 1))
	env := reg.Env().With("GITHUB_EVENT_NAME", "pull_request").With("GITHUB_EVENT_PATH", event).With("GITHUB_REPOSITORY", "acme/engines")
	out, err = command(dir, actionsEnv(fork, env), "build", "--cache", "runner-c", "--report", "fork/r.json", "--cache-remote-mode", "read-write", "--comment", "off").CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Fatalf("fork: exit %d\n%s", code, out)
	}
	if !strings.Contains(string(out), "::notice title=trt-action%3A engine cache::--cache-remote-mode read-write refused: this pull_request run's code comes from octocat/engines, not acme/engines") {
		t.Errorf("no notice refusing read-write:\n%s", out)
	}
	rf := readReport(t, filepath.Join(fork, "r.json"))
	if rf.Cache == nil || rf.Cache.RemoteMode != "read-only" || !strings.Contains(rf.Cache.ModeNote, "octocat/engines") {
		t.Errorf("fork's report: %+v", rf.Cache)
	}
	for _, bb := range rf.Builds {
		if bb.Cache == nil || bb.Cache.Pushed || bb.Name == "yolo" && (bb.Status != report.StatusOK || !bb.Cache.Stored) {
			t.Errorf("fork: %s: %s, %+v", bb.Name, bb.Status, bb.Cache)
		}
	}
	if got := stepOutput(t, fork, "pushed"); got != "0" {
		t.Errorf("fork: pushed %q", got)
	}

	// --cache-remote '' and --no-cache: no store.
	for _, args := range [][]string{{"--cache", "runner-a", "--cache-remote="}, {"--no-cache"}} {
		report := filepath.Join(dir, "off.json")
		out, err := command(dir, envList(reg.Env()), append([]string{"build", "--report", report}, args...)...).CombinedOutput()
		if code := exitCode(err); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
		if r := readReport(t, report); r.Cache != nil {
			t.Errorf("%v: the run had a store: %+v", args, r.Cache)
		}
	}
}

// sameFile reports whether the file at path has the bytes of an engine
// somewhere under folder (a cache folder's entries).
func sameFile(t *testing.T, path, folder string) bool {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	filepath.WalkDir(folder, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "engine" {
			if got, _ := os.ReadFile(p); bytes.Equal(got, want) {
				found = true
			}
		}
		return nil
	})
	return found
}

// A remote hit whose entry another runner wrote with hostile text (the
// original build's name, library, reason, warnings and output tail): a
// runner takes its engine, and no output of the run lets that text act:
// no workflow command in the log, no mention in the job summary.
func TestHostileTextFromTheStoreStaysInert(t *testing.T) {
	reg := remotetest.StartRegistry(t, remotetest.RegistryOptions{})
	url := reg.URL("acme/engines")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), sharedMatrix(url))
	if out, err := command(dir, envList(reg.Env()), "build", "--cache", "runner-a", "--only", "resnet", "--report", "a.json").CombinedOutput(); err != nil {
		t.Fatalf("runner a: %v\n%s", err, out)
	}
	key := readReport(t, filepath.Join(dir, "a.json")).Builds[0].Cache.Key
	rewrite(t, url, reg.Env(), key, func(meta map[string]any) {
		meta["build"] = "::error::stored by @octocat"
		orig := meta["original"].(map[string]any)
		orig["name"] = "::error::x @octocat"
		orig["library"] = "::warning::lib ##[error]y @octocat"
		orig["reason"] = "@octocat/team #12"
		orig["warnings"] = []string{"::error::w @octocat"}
		orig["script"] = map[string]any{"exit": "::error::exit", "output_tail": []string{"::error::tail @octocat"}}
	})
	os.RemoveAll(filepath.Join(dir, "out"))
	b := filepath.Join(dir, "b")
	os.MkdirAll(b, 0o755)
	out, err := command(dir, actionsEnv(b, reg.Env()), "build", "--cache", "runner-b", "--only", "resnet", "--report", "b/r.json", "--junit", "b/j.xml", "--comment", "off").CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Fatalf("runner b: exit %d\n%s", code, out)
	}
	r := readReport(t, filepath.Join(b, "r.json"))
	if h := r.Builds[0]; h.Status != report.StatusCached || h.Cache.From != report.CacheFromRemote || h.Cache.Original == nil || h.Cache.Original.Name != "::error::x @octocat" {
		t.Fatalf("the hostile entry was not taken as it is: %+v", h.Cache)
	}
	for _, cmd := range actionstest.RunnerCommands(string(out)) {
		if !strings.HasPrefix(cmd, "::stop-commands::") && !regexp.MustCompile(`^::[0-9a-f]+::$`).MatchString(cmd) &&
			!strings.HasPrefix(cmd, "::group::") && cmd != "::endgroup::" {
			t.Errorf("the runner would run %q", cmd)
		}
	}
	summary, _ := os.ReadFile(filepath.Join(b, "summary.md"))
	if live := texttest.LiveIn(string(summary)); len(live) > 0 {
		t.Errorf("the summary mentions %v:\n%s", live, summary)
	}
}

// rewrite replaces key's entry in the store with one whose metadata edit
// changed, the engine as it was: what a runner with write access to the
// store could put there.
func rewrite(t *testing.T, url string, env remotetest.Env, key string, edit func(map[string]any)) {
	t.Helper()
	ctx := context.Background()
	store, err := remote.Open(ctx, url, remote.Options{Getenv: env.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	e, err := store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	body, err := store.Open(ctx, e, 0)
	if err != nil {
		t.Fatal(err)
	}
	var engine bytes.Buffer
	if _, err := engine.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	body.Close()
	var meta map[string]any
	if err := json.Unmarshal(e.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	edit(meta)
	data, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	up := remote.Upload{File: e.Files[0], Body: bytes.NewReader(engine.Bytes())}
	if _, err := store.Put(ctx, key, data, []remote.Upload{up}, true); err != nil {
		t.Fatal(err)
	}
}

// The engine cache page's two shared-store workflows: every input they
// give the composite action is one it has, the store's URL is one a store
// takes, and each grants the permission its credentials need (packages:
// write for GHCR's token, id-token: write for OIDC). actionlint passed
// them when they were written; this keeps them true to the action.
func TestSharedStoreRecipesUseRealInputs(t *testing.T) {
	var action struct {
		Inputs map[string]any `yaml:"inputs"`
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "action/composite/action.yml"))
	if err != nil || yaml.Unmarshal(data, &action) != nil {
		t.Fatalf("action/composite/action.yml: %v", err)
	}
	doc := page(t, "docs/engine-cache.md")
	for heading, permission := range map[string][2]string{
		"### A registry: GHCR with the job's token": {"packages", "write"},
		"### A bucket: S3 with OIDC":                {"id-token", "write"},
	} {
		blocks := fenced(section(t, doc, heading), "yaml")
		var wf struct {
			Permissions map[string]string                       `yaml:"permissions"`
			Jobs        map[string]struct{ Steps []recipeStep } `yaml:"jobs"`
		}
		if len(blocks) != 1 || yaml.Unmarshal([]byte(blocks[0]), &wf) != nil {
			t.Fatalf("%s: want one workflow", heading)
		}
		if wf.Permissions[permission[0]] != permission[1] {
			t.Errorf("%s: permissions %v lack %s: %s", heading, wf.Permissions, permission[0], permission[1])
		}
		found := false
		for _, step := range wf.Jobs["engines"].Steps {
			if !strings.HasPrefix(step.Uses, "trt-action/trt-action/action/composite@") {
				continue
			}
			found = true
			for input := range step.With {
				if _, ok := action.Inputs[input]; !ok {
					t.Errorf("%s: the composite action has no input %q", heading, input)
				}
			}
			if err := matrix.CheckRemote(step.With["cache-remote"]); err != nil || step.With["cache-remote"] == "" {
				t.Errorf("%s: cache-remote %q: %v", heading, step.With["cache-remote"], err)
			}
		}
		if !found {
			t.Errorf("%s: no step uses the composite action", heading)
		}
	}
}

// A store that is down when the run starts costs the run the store, never
// its result: the URL is fine (no usage error), the builds run, are
// stored in the folder and exit 0, and the report has one warning naming
// the store. (The tier decides this at run time; the command line only
// opens the store, which sends nothing.)
func TestAStoreThatIsDownCostsTheStoreNotTheRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	url := "oci://" + addr + "/acme/engines"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), sharedMatrix(url))
	out, err := command(dir, nil, "build", "--cache", "c", "--report", "r.json").CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	r := readReport(t, filepath.Join(dir, "r.json"))
	if r.Cache == nil || r.Cache.Remote != url || len(r.Cache.Warnings) != 1 || !strings.Contains(r.Cache.Warnings[0], url) {
		t.Errorf("report's store: %+v", r.Cache)
	}
	for _, b := range r.Builds {
		if b.Status != report.StatusOK || b.Cache == nil || !b.Cache.Stored || b.Cache.Pushed {
			t.Errorf("%s: %s, %+v", b.Name, b.Status, b.Cache)
		}
	}
}
