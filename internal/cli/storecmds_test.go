package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/actions/actionstest"
	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// fenceEnd is the line that ends a stop-commands fence.
var fenceEnd = regexp.MustCompile(`^::[0-9a-f]+::$`)

// fillStore stores an entry per name in a cache folder and pushes each to
// the store at url, as a run's pushes would.
func fillStore(t *testing.T, url string, env remotetest.Env, names ...string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "folder")
	c := fillCache(t, dir, names...)
	store, err := remote.Open(context.Background(), url, remote.Options{Getenv: env.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		sum := sha256.Sum256([]byte(name))
		if p, err := c.Push(context.Background(), store, cache.Key(hex.EncodeToString(sum[:])), false, nil); err != nil || !p.Pushed {
			t.Fatalf("push %s: %+v, %v", name, p, err)
		}
	}
}

// putRaw puts an entry whose metadata is meta (not a cache's), as a
// store another tool wrote, or one tampered with, holds it.
func putRaw(t *testing.T, url string, env remotetest.Env, key string, meta []byte) {
	t.Helper()
	store, err := remote.Open(context.Background(), url, remote.Options{Getenv: env.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("not an engine")
	sum := sha256.Sum256(body)
	up := remote.Upload{File: remote.File{Name: "engine", Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}, Body: strings.NewReader(string(body))}
	if _, err := store.Put(context.Background(), key, meta, []remote.Upload{up}, false); err != nil {
		t.Fatal(err)
	}
}

// storeCommand runs trt-action cache ARGS with env as its whole environment.
func storeCommand(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	c, out, errb := fanoutCommand(env)
	code := c.Main(append([]string{"cache"}, args...))
	return code, out.String(), errb.String()
}

// cache ls --remote lists a real registry's entries with what their
// metadata says, needs no cache folder, takes the store as a build does
// (the URL given, else the variable, else the matrix's), lists an entry
// whose metadata is refused as broken, and keeps the store's text inert
// in a workflow log.
func TestCacheLsRemote(t *testing.T) {
	reg := remotetest.StartRegistry(t, remotetest.RegistryOptions{})
	url := reg.URL("acme/engines")
	env := reg.Env()
	fillStore(t, url, env, "resnet", "bert")
	sum := sha256.Sum256([]byte("not an engine"))
	hostile := fmt.Sprintf(`{"format":%d,"key":"%s","build":"::error::x @octocat","backend":"sim","files":[{"name":"engine","role":"engine","size":13,"sha256":"%x"}]}`,
		cache.FormatVersion, strings.Repeat("f", 64), sum)
	putRaw(t, url, env, strings.Repeat("f", 64), []byte(hostile))
	putRaw(t, url, env, strings.Repeat("a", 64), []byte(fmt.Sprintf(`{"format":%d,"key":"%s","build":"stolen"}`, cache.FormatVersion, strings.Repeat("b", 64))))
	inDir(t, map[string]string{"trt-builds.yml": "version: 1\ncache: {remote: '" + url + "'}\nbuilds:\n  - {name: a, backend: sim}\n"})

	code, out, errb := storeCommand(t, env, "ls", "--remote", url)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{"key           size    uploaded  build", " resnet ", " bert ", "stolen (broken)", "4 entries (1 broken), ", " in " + url + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if !strings.Contains(errb, "shared store entry "+strings.Repeat("a", 64)+" is broken: its metadata names key "+strings.Repeat("b", 64)) {
		t.Errorf("no warning for the broken entry:\n%s", errb)
	}
	if _, err := os.Stat(".trt-cache"); err == nil {
		t.Error("cache ls --remote made a cache folder")
	}
	// The matrix's store, and the variable's over it.
	for _, e := range []map[string]string{env, env.With(remoteEnv, url)} {
		if code, got, errb := storeCommand(t, e, "ls", "--remote"); code != ExitOK || !strings.Contains(got, "4 entries") {
			t.Errorf("--remote alone (%s=%q): exit %d\n%s%s", remoteEnv, e[remoteEnv], code, got, errb)
		}
	}
	code, out, _ = storeCommand(t, env, "ls", "--remote="+url, "--json")
	var listed []cache.StoredEntry
	if err := json.Unmarshal([]byte(out), &listed); code != ExitOK || err != nil || len(listed) != 4 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	for _, e := range listed {
		if e.Build == "resnet" && (e.Bytes != 1000 || e.Backend != "sim" || e.Uploaded.IsZero() || e.Broken != "") {
			t.Errorf("resnet listed as %+v", e)
		}
	}
	// In a workflow log the store's text is fenced: the runner runs none
	// of it.
	code, out, _ = storeCommand(t, env.With("GITHUB_ACTIONS", "true"), "ls", "--remote", url)
	if !strings.Contains(out, "::error::x @") {
		t.Fatalf("exit %d: the hostile entry is not listed:\n%s", code, out)
	}
	for _, cmd := range actionstest.RunnerCommands(out) {
		if !strings.HasPrefix(cmd, "::stop-commands::") && !fenceEnd.MatchString(cmd) && !strings.HasPrefix(cmd, "::warning title=trt-action%3A engine cache::") {
			t.Errorf("the runner would run %q", cmd)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ls", "--remote", "--cache", "c"}, "--remote and --cache: give one"},
		{[]string{"ls", "--remote", "https://ghcr.io/x"}, `--remote: remote store "https://ghcr.io/x": unknown scheme`},
		{[]string{"ls", "--remote", "-f", "missing.yml"}, "-f: matrix file"},
	} {
		if code, _, errb := storeCommand(t, env, c.args...); code != ExitInvalid || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d, %s; want %q", c.args, code, errb, c.want)
		}
	}
}

// cache prune --remote removes what was uploaded longer ago than
// --older-than (from a registry, and from an S3 store, whose files no
// entry names are swept after); --max-size with --remote is refused; a
// store that allows no deletion says what to use instead.
func TestCachePruneRemote(t *testing.T) {
	inDir(t, nil)
	reg := remotetest.StartRegistry(t, remotetest.RegistryOptions{})
	s3 := remotetest.StartS3(t, remotetest.S3Options{})
	for _, store := range []struct {
		url string
		env remotetest.Env
	}{{reg.URL("acme/engines"), reg.Env()}, {s3.URL("ci", s3.Endpoint), s3.Env()}} {
		fillStore(t, store.url, store.env, "old", "new")
		if code, out, errb := storeCommand(t, store.env, "prune", "--remote", store.url, "--older-than", "720h"); code != ExitOK || !strings.HasSuffix(out, "removed 0 entries, 0 B, from "+remote.Redact(store.url)+"\n") {
			t.Errorf("%s: --older-than 720h: exit %d\n%s%s", store.url, code, out, errb)
		}
		code, out, errb := storeCommand(t, store.env, "prune", "--remote", store.url, "--older-than", "1ns")
		if code != ExitOK || !strings.Contains(out, " old (1.0 kB, uploaded just now)\n") || !strings.Contains(out, "removed 2 entries, 2.0 kB") {
			t.Errorf("%s: --older-than 1ns: exit %d\n%s%s", store.url, code, out, errb)
		}
		if code, out, _ := storeCommand(t, store.env, "ls", "--remote", store.url); code != ExitOK || !strings.Contains(out, "0 entries") {
			t.Errorf("%s: after the prune: exit %d\n%s", store.url, code, out)
		}
	}
	for _, args := range [][]string{
		{"prune", "--remote", reg.URL("acme/engines"), "--max-size", "1GiB", "--older-than", "1h"},
		{"prune", "--remote", reg.URL("acme/engines"), "--other-formats"},
	} {
		code, _, errb := storeCommand(t, reg.Env(), args...)
		if code != ExitInvalid || !strings.Contains(errb, "with --remote: a shared store is pruned by upload time only (--older-than DURATION)") {
			t.Errorf("%v: exit %d, %s", args, code, errb)
		}
	}
	locked := remotetest.StartRegistry(t, remotetest.RegistryOptions{NoDelete: true})
	fillStore(t, locked.URL("acme/engines"), locked.Env(), "kept")
	code, out, errb := storeCommand(t, locked.Env(), "prune", "--remote", locked.URL("acme/engines"), "--older-than", "1ns")
	if code != ExitFailed || out != "" || !strings.Contains(errb, "the store does not allow deleting entries") || !strings.Contains(errb, "S3 lifecycle rule") || !strings.Contains(errb, "retention") {
		t.Errorf("a store that allows no deletion: exit %d\n%s%s", code, out, errb)
	}
}
