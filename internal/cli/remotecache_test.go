package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// remoteMatrix has a folder and a store, read-only.
const remoteMatrix = "version: 1\ncache:\n  dir: c\n  remote: oci://registry.example/acme/file-engines\n  remote-mode: read-only\nbuilds:\n  - {name: a, backend: sim}\n"

// Where the run's store comes from: the flag over the variable over the
// matrix; --cache-remote ” switches the others off; the mode from the
// flag over the matrix, read-write by default.
func TestRemotePrecedence(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": remoteMatrix, "plain.yml": "version: 1\nbuilds:\n  - {name: a, backend: sim}\n"})
	file, err := matrix.Load("trt-builds.yml")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := matrix.Load("plain.yml")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{remoteEnv: "s3://var-engines/ci"}
	for _, c := range []struct {
		name        string
		args        []string
		file        *matrix.File
		env         map[string]string
		url, origin string
		mode        remote.Mode
	}{
		{"the matrix's", nil, file, nil, "oci://registry.example/acme/file-engines", "cache: remote", remote.ReadOnly},
		{"the variable over the matrix", nil, file, env, "s3://var-engines/ci", remoteEnv, remote.ReadOnly},
		{"the flag over both", []string{"--cache-remote", "oci://flag.example/e"}, file, env, "oci://flag.example/e", "--cache-remote", remote.ReadOnly},
		{"'' switches them off", []string{"--cache-remote="}, file, env, "", "--cache-remote", remote.ReadOnly},
		{"the mode flag over the matrix", []string{"--cache-remote-mode", "read-write"}, file, nil, "oci://registry.example/acme/file-engines", "cache: remote", remote.ReadWrite},
		{"read-write by default", nil, plain, env, "s3://var-engines/ci", remoteEnv, remote.ReadWrite},
	} {
		c2, _, _ := fanoutCommand(c.env)
		var f buildFlags
		fs := c2.buildFlagSet(&f)
		if err := c2.parse(fs, c.args, buildInputs); err != nil {
			t.Fatal(err)
		}
		ch := f.cache.remote.choose(c.file, c2.Getenv)
		if ch.url != c.url || ch.url != "" && ch.origin != c.origin || ch.mode != c.mode {
			t.Errorf("%s: %q from %q, %s; want %q from %q, %s", c.name, ch.url, ch.origin, ch.mode, c.url, c.origin, c.mode)
		}
	}
}

// The action's inputs reach the flags, as the container action passes
// them (INPUT_*).
func TestRemoteInputs(t *testing.T) {
	c, _, _ := fanoutCommand(map[string]string{"INPUT_CACHE-REMOTE": "oci://ghcr.io/acme/engines", "INPUT_CACHE-REMOTE-MODE": "read-only"})
	var f buildFlags
	if err := c.parse(c.buildFlagSet(&f), nil, buildInputs); err != nil {
		t.Fatal(err)
	}
	if f.cache.remote.url.value != "oci://ghcr.io/acme/engines" || f.cache.remote.mode != "read-only" {
		t.Errorf("inputs gave %+v", f.cache.remote)
	}
}

// What cannot work is refused before anything starts, all at once: a
// store's URL that no store takes (from the variable or the flag, named
// so; the password in it never shown), a mode, a push timeout, a store
// asked for with --no-cache, a store with no folder in front of it.
func TestRemoteProblemsAreReportedAtOnce(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": "version: 1\nbuilds:\n  - {name: a, backend: sim}\n", "remote.yml": remoteMatrix})
	for _, c := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"build", "--cache", "c", "--cache-remote", "https://u:hunter2@ghcr.io/x", "--cache-remote-mode", "write", "--cache-push-timeout", "-1s"}, nil, []string{
			`trt-action: --cache-remote-mode "write": allowed: read-write, read-only`,
			"trt-action: --cache-push-timeout -1s: must be above zero",
			`trt-action: --cache-remote: remote store "https://ghcr.io/x": unknown scheme "https"; a remote store is oci://HOST[:PORT]/REPOSITORY or s3://BUCKET[/PREFIX][?endpoint=URL&region=R]`}},
		{[]string{"build", "--cache", "c"}, map[string]string{remoteEnv: "oci://ghcr.io"}, []string{
			`trt-action: ` + remoteEnv + `: remote store "oci://ghcr.io": no REPOSITORY after the host`}},
		{[]string{"build", "--no-cache", "--cache-remote", "oci://ghcr.io/acme/e"}, nil, []string{
			"trt-action: --cache-remote and --no-cache: give one"}},
		{[]string{"build", "--cache-remote", "oci://ghcr.io/acme/e"}, nil, []string{
			`trt-action: --cache-remote "oci://ghcr.io/acme/e": a shared store needs a cache folder in front of it`, "give cache: {dir: ...} in trt-builds.yml, --cache DIR or the action's cache input"}},
		{[]string{"build"}, map[string]string{remoteEnv: "s3://engines"}, []string{
			`trt-action: ` + remoteEnv + ` "s3://engines": a shared store needs a cache folder`}},
	} {
		c2, _, errb := fanoutCommand(c.env)
		code := c2.Main(c.args)
		if code != ExitInvalid {
			t.Errorf("%v %v: exit %d, want %d\n%s", c.args, c.env, code, ExitInvalid, errb)
		}
		for _, w := range c.want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%v %v: no %q in\n%s", c.args, c.env, w, errb)
			}
		}
		if strings.Contains(errb.String(), "hunter2") {
			t.Errorf("a password in the URL was shown:\n%s", errb)
		}
	}
	if _, err := os.Stat("c"); err == nil {
		t.Error("a refused run created the cache folder")
	}
	// A mode with the matrix's store, overridden by the flag's: no error.
	c, _, errb := fanoutCommand(nil)
	if code := c.Main([]string{"build", "-f", "remote.yml", "--cache-remote-mode", "read-only", "--cache-remote", "oci://ghcr.io/acme/e"}); code == ExitInvalid {
		t.Errorf("refused: %s", errb)
	}
}

// eventFile writes a pull_request event whose head repository is head.
func eventFile(t *testing.T, head string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "event.json")
	body := `{"pull_request":{"number":3,"head":{"sha":"abc","repo":{"full_name":"` + head + `"}}}}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A pull request from a fork runs read-only: the report says why, a
// notice says so (refusing an explicit read-write), and a pull request
// from a branch of the repository itself keeps its mode.
func TestForkPullRequestsAreReadOnly(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": remoteMatrix})
	file, err := matrix.Load("trt-builds.yml")
	if err != nil {
		t.Fatal(err)
	}
	gh := func(head string) map[string]string {
		return map[string]string{"GITHUB_EVENT_NAME": "pull_request_target", "GITHUB_EVENT_PATH": eventFile(t, head), "GITHUB_REPOSITORY": "acme/engines"}
	}
	for _, c := range []struct {
		name   string
		env    map[string]string
		mode   string
		mode2  remote.Mode
		notice string
	}{
		{"a fork, read-write asked", gh("octocat/engines"), "read-write", remote.ReadOnly,
			"--cache-remote-mode read-write refused: this pull_request_target run's code comes from octocat/engines, not acme/engines; this run only reads the shared store oci://registry.example/acme/file-engines"},
		{"a fork, the matrix's read-only", gh("octocat/engines"), "", remote.ReadOnly, ""},
		{"the repository's own branch", gh("acme/engines"), "read-write", remote.ReadWrite, ""},
	} {
		c2, _, errb := fanoutCommand(c.env)
		s, err := c2.openShared(&remoteFlags{mode: c.mode, pushTimeout: defaultPushTimeout}, file)
		if err != nil || s == nil || s.store == nil {
			t.Fatalf("%s: %+v, %v", c.name, s, err)
		}
		if s.mode != c.mode2 {
			t.Errorf("%s: mode %s, want %s", c.name, s.mode, c.mode2)
		}
		if got := strings.TrimSpace(strings.TrimPrefix(errb.String(), "trt-action: ")); got != c.notice {
			t.Errorf("%s: notice %q, want %q", c.name, got, c.notice)
		}
		r := &report.Report{}
		s.decorate(r)
		if c.mode2 == remote.ReadOnly && c.mode == "read-write" && (r.Cache != nil) {
			t.Errorf("%s: decorate made a store the run itself reports: %+v", c.name, r.Cache)
		}
		r.Cache = &report.RunCache{Remote: s.location, RemoteMode: string(s.mode)}
		s.decorate(r)
		if wantNote := c.notice != ""; (r.Cache.ModeNote != "") != wantNote || wantNote && !strings.Contains(r.Cache.ModeNote, "octocat/engines") {
			t.Errorf("%s: mode note %q", c.name, r.Cache.ModeNote)
		}
	}
}

// A store that cannot be opened for want of what this machine holds (a
// certificate bundle named but missing) costs the run the store, never
// the run: a warning, and the report names the store and why.
func TestAStoreThatCannotBeOpenedIsAWarning(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": remoteMatrix})
	file, err := matrix.Load("trt-builds.yml")
	if err != nil {
		t.Fatal(err)
	}
	c, _, errb := fanoutCommand(map[string]string{"SSL_CERT_FILE": filepath.Join(t.TempDir(), "missing.pem")})
	s, err := c.openShared(&remoteFlags{pushTimeout: defaultPushTimeout}, file)
	if err != nil || s == nil || s.store != nil || s.warning == "" {
		t.Fatalf("%+v, %v", s, err)
	}
	if !strings.Contains(errb.String(), "cannot be used in this run") {
		t.Errorf("no warning: %s", errb)
	}
	r := &report.Report{}
	s.decorate(r)
	s.decorate(r) // at every checkpoint: once
	if r.Cache == nil || r.Cache.Remote != "oci://registry.example/acme/file-engines" || len(r.Cache.Warnings) != 1 {
		t.Errorf("report: %+v", r.Cache)
	}
}

// version names the store a run would use before its matrix is read,
// from the flag or the variable, never with what Redact hides.
func TestVersionNamesTheStore(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{remoteEnv: "s3://engines/ci?region=eu-west-1"}, "engine cache store: s3://engines/ci?region=eu-west-1 (" + remoteEnv + ")\n"},
		{[]string{"--cache-remote", "oci://ghcr.io/acme/engines"}, map[string]string{remoteEnv: "s3://engines"}, "engine cache store: oci://ghcr.io/acme/engines (--cache-remote)\n"},
		{[]string{"--cache-remote", "oci://me:secret@ghcr.io/acme/e"}, nil, `engine cache store: oci://ghcr.io/acme/e (--cache-remote): remote store "oci://ghcr.io/acme/e": credentials do not belong in the URL`},
		{nil, nil, ""},
	} {
		cmd, out, errb := fanoutCommand(c.env)
		if code := cmd.Main(append([]string{"version"}, c.args...)); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb)
		}
		_, line, _ := strings.Cut(out.String(), "engine cache store:")
		if c.want == "" && line != "" || c.want != "" && !strings.Contains(out.String(), c.want) || strings.Contains(out.String(), "secret") {
			t.Errorf("%v %v: %q, want %q", c.args, c.env, out.String(), c.want)
		}
	}
}

// The container action gets its inputs as INPUT_* and no GITHUB_TOKEN:
// the store is opened with the github-token input as GITHUB_TOKEN (what
// ghcr.io gets when nothing else is configured), else the variable.
func TestTheStoreGetsTheGitHubTokenInput(t *testing.T) {
	c, _, _ := fanoutCommand(map[string]string{"INPUT_GITHUB-TOKEN": "from-input", "GITHUB_TOKEN": "from-env", "DOCKER_CONFIG": "/d"})
	if got := c.storeEnv("GITHUB_TOKEN"); got != "from-input" {
		t.Errorf("GITHUB_TOKEN %q, want the input's", got)
	}
	if got := c.storeEnv("DOCKER_CONFIG"); got != "/d" {
		t.Errorf("DOCKER_CONFIG %q", got)
	}
	c, _, _ = fanoutCommand(map[string]string{"GITHUB_TOKEN": "from-env"})
	if got := c.storeEnv("GITHUB_TOKEN"); got != "from-env" {
		t.Errorf("without the input: %q", got)
	}
}
