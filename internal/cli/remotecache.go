package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/github"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// The shared store behind the engine cache folder (internal/cache/remote):
// where a run's store comes from, in what mode, and opening it.
//
//	URL:  --cache-remote URL (the cache-remote input), else
//	      TRT_ACTION_CACHE_REMOTE, else the matrix's cache.remote;
//	      --cache-remote '' switches the others off.
//	mode: --cache-remote-mode (the cache-remote-mode input), else the
//	      matrix's cache.remote-mode, else read-write; read-only whatever
//	      is asked where the code that runs comes from another repository
//	      (github.ForeignHead: a pull request from a fork).

// remoteEnv is the variable that names a shared store for every run of a
// machine or an organisation, over the matrix's.
const remoteEnv = "TRT_ACTION_CACHE_REMOTE"

// givenString is a string flag that knows it was given, even as "".
type givenString struct {
	value string
	given bool
}

func (g *givenString) String() string { return g.value }

func (g *givenString) Set(v string) error {
	g.value, g.given = v, true
	return nil
}

// remoteFlags are build's flags for the shared store.
type remoteFlags struct {
	url         givenString   // --cache-remote
	mode        string        // --cache-remote-mode
	pushTimeout time.Duration // --cache-push-timeout
}

// defaultPushTimeout is --cache-push-timeout's default.
const defaultPushTimeout = 5 * time.Minute

func (f *remoteFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.url, "cache-remote", "a shared store behind the cache folder: oci://HOST[:PORT]/REPOSITORY or s3://BUCKET[/PREFIX][?endpoint=URL&region=R] (`URL`; over "+remoteEnv+" and the matrix's cache.remote; '' for none)")
	fs.StringVar(&f.mode, "cache-remote-mode", "", "what this run may do with the shared store: read-write or read-only (`mode`; default: the matrix's cache.remote-mode, else read-write)")
	fs.DurationVar(&f.pushTimeout, "cache-push-timeout", defaultPushTimeout, "how long a run whose builds have ended waits for its pushes to the shared store (`duration`)")
}

// remoteChoice is the run's shared store as the flags, the environment
// and the matrix name it, before it is opened.
type remoteChoice struct {
	url    string // as given (it may hold what Redact hides); "" for none
	origin string // where it was given, for messages: never the URL's secrets
	// pos is where the matrix gave it ("" otherwise): its errors start
	// with it.
	pos  string
	mode remote.Mode
	// modeAsked says where read-write was asked for explicitly ("" when
	// the mode is the default or read-only), for the notice that refuses it.
	modeAsked string
}

// choose says which store the run uses and in what mode: the flag, else
// the variable, else the matrix file (file.Cache may be nil).
func (f *remoteFlags) choose(file *matrix.File, getenv func(string) string) remoteChoice {
	var ch remoteChoice
	fc := file.Cache
	switch {
	case f.url.given:
		ch.url, ch.origin = f.url.value, "--cache-remote"
	case getenv(remoteEnv) != "":
		ch.url, ch.origin = getenv(remoteEnv), remoteEnv
	case fc != nil && fc.Remote != "":
		ch.url, ch.origin, ch.pos = fc.Remote, "cache: remote", fc.RemotePos.String()
	}
	ch.mode = remote.ReadWrite
	switch {
	case f.mode != "":
		ch.mode = remote.Mode(f.mode)
		if ch.mode == remote.ReadWrite {
			ch.modeAsked = "--cache-remote-mode read-write"
		}
	case fc != nil && fc.RemoteMode != "":
		ch.mode = remote.Mode(fc.RemoteMode)
		if ch.mode == remote.ReadWrite {
			ch.modeAsked = fc.RemoteModePos.String() + ": cache: remote-mode read-write"
		}
	}
	return ch
}

// named is how messages name where the store was given:
// `--cache-remote "oci://…"`, or `trt-builds.yml:4:3: cache: remote "s3://…"`,
// the URL redacted.
func (ch remoteChoice) named() string {
	s := fmt.Sprintf("%s %q", ch.origin, remote.Redact(ch.url))
	if ch.pos != "" {
		s = ch.pos + ": " + s
	}
	return s
}

// check refuses what cannot work, all at once: a mode no store takes, a
// push timeout that is not a time, a store of a URL no store takes (the
// matrix's was checked where it was read), a store asked for with
// --no-cache, and a store with no cache folder in front of it (hasFolder).
func (f *remoteFlags) check(file *matrix.File, getenv func(string) string, off, hasFolder bool) []error {
	var errs []error
	if f.mode != "" && !slices.Contains(matrix.RemoteModes, f.mode) {
		errs = append(errs, usagef("--cache-remote-mode %q: allowed: %s", f.mode, strings.Join(matrix.RemoteModes, ", ")))
	}
	if f.pushTimeout <= 0 {
		errs = append(errs, usagef("--cache-push-timeout %s: must be above zero (how long a run waits for its pushes to the shared store once its builds have ended)", f.pushTimeout))
	}
	ch := f.choose(file, getenv)
	switch {
	case ch.url == "":
	case off && f.url.given:
		errs = append(errs, usagef("--cache-remote and --no-cache: give one (--no-cache uses neither the cache folder nor a shared store)"))
	case off:
	case ch.pos == "" && matrix.CheckRemote(ch.url) != nil:
		errs = append(errs, usagef("%s: %v", ch.origin, matrix.CheckRemote(ch.url)))
	case !hasFolder:
		errs = append(errs, usagef("%s: a shared store needs a cache folder in front of it (engines are pulled into it and pushed from it): give cache: {dir: ...} in %s, --cache DIR or the action's cache input",
			ch.named(), file.Path))
	}
	return errs
}

// sharedStore is the run's shared store once opened, and what the report
// says of it beyond what the run itself finds.
type sharedStore struct {
	store remote.Store // nil: none, or it could not be opened
	mode  remote.Mode
	// note says why the mode is not the one asked for (report.RunCache's
	// ModeNote); warning why the store could not be opened.
	note, warning string
	location      string // the store's URL without credentials
}

// openShared opens the run's store (none without a URL or with the cache
// off): a URL no store takes is a usage error (check said so first); a
// store that cannot be opened for another reason (its credentials file
// unreadable, a certificate bundle missing) is a warning, and the run goes
// on with the cache folder alone, as it does when the store is down.
// Opening sends nothing: a store that is down is found by the run.
func (c *Command) openShared(f *remoteFlags, file *matrix.File) (*sharedStore, error) {
	ch := f.choose(file, c.Getenv)
	if ch.url == "" {
		return nil, nil
	}
	s := &sharedStore{mode: ch.mode, location: remote.Redact(ch.url)}
	if why := github.ForeignHead(github.EnvFrom(c.Getenv)); why != "" && s.mode == remote.ReadWrite {
		s.mode = remote.ReadOnly
		s.note = fmt.Sprintf("read-only: %s, and code from another repository must not write engines that other runs deliver", why)
		if ch.modeAsked != "" {
			c.cacheNotice("%s refused: %s; this run only reads the shared store %s", ch.modeAsked, why, s.location)
		} else {
			c.cacheNotice("the shared store %s is read-only in this run: %s", s.location, why)
		}
	}
	store, err := remote.Open(context.Background(), ch.url, remote.Options{Getenv: c.storeEnv})
	var bad *remote.URLError
	switch {
	case errors.As(err, &bad):
		return nil, usagef("%s: %v", ch.origin, err)
	case err != nil:
		s.warning = fmt.Sprintf("the shared store %s cannot be used in this run: %v; builds use the cache folder alone", s.location, err)
		c.note(c.actions(), actions.LevelWarning, "trt-action: engine cache", text.Line(s.warning))
		return s, nil
	}
	s.store = store
	return s, nil
}

// decorate puts in the report what only the command line knows of the
// store: why its mode is read-only, or that it could not be opened (the
// run then reports a store it never used, with the warning). It is
// called with every checkpoint, on the goroutine that owns the report,
// and sets the same thing each time.
func (s *sharedStore) decorate(r *report.Report) {
	if s == nil {
		return
	}
	if r.Cache == nil {
		if s.store != nil {
			return // the run reports it
		}
		r.Cache = &report.RunCache{Remote: s.location, RemoteMode: string(s.mode)}
	}
	r.Cache.ModeNote = s.note
	if s.warning != "" && !slices.Contains(r.Cache.Warnings, s.warning) {
		r.Cache.Warnings = append(r.Cache.Warnings, s.warning)
	}
}

// storeEnv is the environment a store is opened with: the command's, but
// GITHUB_TOKEN is the github-token input when it is given (as it is to the
// container action, which gets its inputs as INPUT_* and no GITHUB_TOKEN),
// so the token a workflow gives trt-action is the one ghcr.io gets when
// nothing else is configured for it.
func (c *Command) storeEnv(name string) string {
	if name == "GITHUB_TOKEN" {
		return c.githubToken()
	}
	return c.Getenv(name)
}
