package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/text"
)

// cacheVerbs are the cache command's own verbs: trt-action cache VERB.
var cacheVerbs = map[string]struct {
	summary string
	run     func(c *Command, args []string) error
}{
	"key":    {"print one key over every build's key, for actions/cache (--prefix: its restore-keys prefix; --explain: what went into each build's key)", runCacheKey},
	"ls":     {"list the cache's entries (--json for tools)", runCacheList},
	"prune":  {"remove least recently used entries (--max-size SIZE, --older-than DURATION) and older cache formats' folders (--other-formats)", runCachePrune},
	"verify": {"check every entry's engine against its SHA-256; bad entries are removed, and the exit code is 1", runCacheVerify},
}

func runCache(c *Command, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		c.cacheUsage()
		if len(args) == 0 {
			return usagef("cache: name a verb: key, ls, prune or verify")
		}
		return nil
	}
	verb, ok := cacheVerbs[args[0]]
	if !ok {
		return usagef("cache: unknown verb %q; allowed: key, ls, prune, verify", args[0])
	}
	return verb.run(c, args[1:])
}

// cacheUsage is cache -h: every verb with its flags.
func (c *Command) cacheUsage() {
	fmt.Fprintf(c.Streams.Err, "Usage: trt-action cache VERB [flags]\n\n"+
		"The cache folder is --cache DIR, else the matrix file's cache: dir (-f FILE, default %s).\n", matrix.DefaultFile)
	for _, name := range slices.Sorted(maps.Keys(cacheVerbs)) {
		fmt.Fprintf(c.Streams.Err, "\n%s: %s\n", name, cacheVerbs[name].summary)
		_ = cacheVerbs[name].run(c, []string{"-h"}) // prints its usage and flags
	}
}

// cacheInputs are the Action inputs the cache verbs read (flag -> input).
var cacheInputs = map[string]string{"f": "matrix", "cache": "cache"}

// cacheFolder is where the verbs find the cache: --cache DIR, else the
// matrix file's cache.dir.
type cacheFolder struct {
	dir  string
	file string
}

// cacheFolderFlags parses the flags of a verb that works on a cache folder
// (ls, prune, verify: they take no arguments) and says where the folder is.
// A verb that can work on the shared store instead (ls, prune) gives its
// --remote flag (store; nil for verify), which may take the store's URL as
// the one argument: --remote URL.
func (c *Command) cacheFolderFlags(fs *flag.FlagSet, args []string, store *storeFlag) (*cacheFolder, error) {
	where := &cacheFolder{}
	fs.StringVar(&where.dir, "cache", "", "the cache `folder` (default: the matrix file's cache: dir)")
	fs.StringVar(&where.file, "f", matrix.DefaultFile, "the matrix `file` whose cache: dir to use")
	given, err := c.parseGiven(fs, args, cacheInputs)
	if err != nil {
		return nil, err
	}
	if store != nil && store.set && store.url == "" && fs.NArg() == 1 {
		store.url = fs.Arg(0) // --remote URL
	} else if fs.NArg() > 0 {
		return nil, usagef("%s takes no arguments; got %q", fs.Name(), fs.Arg(0))
	}
	if store != nil && store.set && given["cache"] {
		return nil, usagef("%s: --remote and --cache: give one (--remote works on the shared store, --cache on a folder)", fs.Name())
	}
	return where, nil
}

// openCacheFolder is cacheFolderFlags, then the folder opened (look: only
// to read it, as ls does).
func (c *Command) openCacheFolder(fs *flag.FlagSet, args []string, look bool) (*cache.Cache, error) {
	where, err := c.cacheFolderFlags(fs, args, nil)
	if err != nil {
		return nil, err
	}
	return c.openFolder(where, look)
}

// storeFlag is --remote [URL] of cache ls and prune: with no value, the
// store a build would use (TRT_ACTION_CACHE_REMOTE, else the matrix
// file's cache: remote).
type storeFlag struct {
	set bool
	url string
}

func (s *storeFlag) String() string { return s.url }

// Set takes --remote (the flag package passes "true") and --remote=URL.
func (s *storeFlag) Set(v string) error {
	s.set = true
	if v != "true" {
		s.url = v
	}
	return nil
}

// IsBoolFlag lets --remote stand alone.
func (s *storeFlag) IsBoolFlag() bool { return true }

func (s *storeFlag) register(fs *flag.FlagSet, what string) {
	fs.Var(s, "remote", what+": --remote URL, or --remote alone for "+remoteEnv+", else the matrix file's cache: remote (no cache folder needed)")
}

// openStore opens the store --remote names, else the variable's, else
// the matrix file's (where.file). A URL no store takes is invalid input
// (exit 2); a store that cannot be opened, any other error.
func (c *Command) openStore(s storeFlag, where *cacheFolder) (remote.Store, error) {
	url, origin := s.url, "--remote"
	if url == "" {
		m, err := matrix.LoadWithoutInputs(where.file)
		if err != nil && c.Getenv(remoteEnv) == "" {
			return nil, flagFileError("-f", matrixError(err))
		}
		if m == nil {
			m = &matrix.File{}
		}
		ch := (&remoteFlags{}).choose(m, c.Getenv)
		if ch.url == "" {
			return nil, usagef("no shared store: give --remote URL, %s, or a matrix file with cache: {remote: ...} (-f %s has none)", remoteEnv, where.file)
		}
		url, origin = ch.url, ch.origin
	}
	store, err := remote.Open(context.Background(), url, remote.Options{Getenv: c.storeEnv})
	var bad *remote.URLError
	if errors.As(err, &bad) {
		return nil, usagef("%s: %v", origin, err)
	}
	return store, err
}

// listStore is cache ls --remote.
func (c *Command) listStore(s storeFlag, where *cacheFolder, asJSON bool) error {
	store, err := c.openStore(s, where)
	if err != nil {
		return err
	}
	entries, err := cache.ListStore(context.Background(), store)
	if err != nil {
		return err
	}
	c.cacheWarnings(cache.StoreWarnings(entries))
	if asJSON {
		data, err := cache.StoreListingJSON(entries)
		if err != nil {
			return err
		}
		_, err = c.Streams.Out.Write(actions.InertJSON(data))
		return err
	}
	c.printUntrusted(c.Streams.Out, cache.StoreListingTable(store.Location(), entries, time.Now()))
	return nil
}

// openFolder opens the cache folder and tells what opening it found (a
// link where its staging folder belongs).
func (c *Command) openFolder(where *cacheFolder, look bool) (*cache.Cache, error) {
	cc, err := where.open(look)
	if err == nil {
		c.cacheWarnings(cc.Notices())
	}
	return cc, err
}

// cacheWarnings shows what a cache command found that is not the cache's
// or that it removed, one warning each, on stderr (annotations in Actions).
func (c *Command) cacheWarnings(msgs []string) {
	for _, m := range msgs {
		c.note(c.actions(), actions.LevelWarning, "trt-action: engine cache", text.Line(m))
	}
}

// open opens the cache folder, which must be there (a mistyped folder is
// an error, never a new empty cache); its max-size is the matrix file's
// when the folder came from it. look opens it to read only: nothing is
// created, removed or cleaned up.
func (f *cacheFolder) open(look bool) (*cache.Cache, error) {
	o := cache.Options{Dir: f.dir, Existing: true, Look: look}
	if o.Dir == "" {
		// The models need not be here: only the cache key is read.
		m, err := matrix.LoadWithoutInputs(f.file)
		if err != nil {
			return nil, flagFileError("-f", matrixError(err))
		}
		if m.Cache == nil || m.Cache.Dir == "" {
			return nil, usagef("no cache folder: give --cache DIR, or a matrix file with cache: {dir: ...} (-f %s has none)", f.file)
		}
		o.Dir, o.MaxSize = m.Cache.Dir, m.Cache.MaxSize
	}
	return cache.Open(o)
}

func runCacheKey(c *Command, args []string) error {
	fs := c.newFlags("cache key", "[-f FILE | FILE] [--only NAME]... [--backend B] [--trt-lib PATH] [--prefix | --explain [--json]]")
	file := fs.String("f", matrix.DefaultFile, "the matrix `file` (or give it as the argument)")
	onBackend := fs.String("backend", "", "as build's --backend: every build on this `backend`")
	trtLib := fs.String("trt-lib", "", "as build's --trt-lib: the TensorRT or TensorRT-RTX library (`path`)")
	prefix := fs.Bool("prefix", false, "print only the prefix every key of this OS, architecture and cache format starts with (restore-keys)")
	explain := fs.Bool("explain", false, "print each build's key as a build computes it (with the GPU, for "+backend.TensorRT+") and every part that went into it, one a line, to compare with another runner's")
	asJSON := fs.Bool("json", false, "with --explain: print JSON")
	var only listFlag
	fs.Var(&only, "only", "only builds with this `name` or glob")
	given, err := c.parseGiven(fs, args, map[string]string{"f": "matrix", "only": "only", "backend": "backend", "trt-lib": "trt-lib"})
	if err != nil {
		return err
	}
	if err := matrixArg("cache key", fs, given, file); err != nil {
		return err
	}
	switch {
	case *prefix && *explain:
		return usagef("cache key: --prefix and --explain: give one (--prefix prints what every key starts with; --explain what went into each build's key)")
	case *asJSON && !*explain:
		return usagef("cache key: --json goes with --explain (the key itself is one line of text)")
	case *prefix:
		_, err := fmt.Fprintln(c.Streams.Out, cache.RestorePrefix())
		return err
	}
	_, builds, err := loadBuilds(*file, only, *onBackend, true)
	if err != nil {
		return err
	}
	builds = c.leaveOutScripts(builds)
	if *explain {
		return c.explainKeys(builds, *trtLib, *asJSON)
	}
	// No target: entries carry their own GPU, and the key is wanted
	// before any GPU is chosen.
	var keys []cache.Key
	for _, bk := range cache.NewHasher().Keys(context.Background(), builds, *trtLib) {
		if bk.Err != nil {
			return bk.Err
		}
		keys = append(keys, bk.Key)
	}
	_, err = fmt.Fprintln(c.Streams.Out, cache.RunKey(keys))
	return err
}

// explainKeys is cache key --explain: each build's key as a build run
// without --gpus computes it (the library it would load, and for
// tensorrt the GPU it would get), and what went into it. A build whose key
// cannot be known is named on stderr with why, and the others are still
// explained; the command then fails with those reasons.
func (c *Command) explainKeys(builds []matrix.Build, trtLib string, asJSON bool) error {
	hasher := cache.NewHasher()
	envs := cache.NameEnvs(hasher, builds, trtLib, nil, c.Getenv("CUDA_VISIBLE_DEVICES"))
	var explained []cache.ExplainedKey
	var errs []error
	for _, b := range builds {
		env, err := envs.Env(b, "")
		var k cache.ExplainedKey
		if err == nil {
			k.Build = b.Name
			k.Key, k.Parts, err = hasher.Explain(context.Background(), b, env)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("build %s: no key: %w", b.Name, err))
			continue
		}
		explained = append(explained, k)
	}
	if asJSON {
		data, err := json.MarshalIndent(explained, "", "  ")
		if err != nil {
			return err
		}
		c.Streams.Out.Write(actions.InertJSON(append(data, '\n')))
	} else {
		c.printUntrusted(c.Streams.Out, cache.ExplainText(explained))
		fmt.Fprintf(c.Streams.Err, "trt-action: cache key: %s\n", cache.NotInAKey)
	}
	return errors.Join(errs...)
}

// leaveOutScripts is builds without those with run: that declare no
// inputs, which are never cached (cache.ErrNoInputs), and says on stderr
// which it left out: the key is of the others (of no build, when no build
// has a key, which is no error: a shard of such builds still needs a key
// for its cache steps). Stdout is the key alone: a workflow reads it with
// $(...).
func (c *Command) leaveOutScripts(builds []matrix.Build) []matrix.Build {
	var kept []matrix.Build
	var names []string
	for _, b := range builds {
		if b.Script != nil && !b.Script.Cached() {
			names = append(names, b.Name)
			continue
		}
		kept = append(kept, b)
	}
	if len(names) > 0 {
		shown := names[:min(len(names), maxNamesShown)]
		more := ""
		if len(names) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(names)-len(shown))
		}
		fmt.Fprintf(c.Streams.Err, "trt-action: cache key: %s left out (%s%s): builds with run: are cached only when they declare their inputs (inputs:)\n",
			text.Count(len(names), "build"), text.Line(strings.Join(shown, ", ")), more)
	}
	return kept
}

// maxNamesShown bounds the names a message lists.
const maxNamesShown = 10

func runCacheList(c *Command, args []string) error {
	fs := c.newFlags("cache ls", "[--cache DIR | -f FILE | --remote [URL]] [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	var store storeFlag
	store.register(fs, "list the shared store's entries instead of the folder's")
	where, err := c.cacheFolderFlags(fs, args, &store)
	if err != nil {
		return err
	}
	if store.set {
		return c.listStore(store, where, *asJSON)
	}
	cc, err := c.openFolder(where, true)
	if err != nil {
		return invalid(err)
	}
	listing, err := cc.List()
	if err != nil {
		return err
	}
	c.cacheWarnings(listing.Warnings())
	if *asJSON {
		data, err := cache.ListingJSON(listing.Entries)
		if err != nil {
			return err
		}
		_, err = c.Streams.Out.Write(actions.InertJSON(data))
		return err
	}
	c.printUntrusted(c.Streams.Out, cache.ListingTable(listing.Entries, time.Now()))
	return nil
}

// sizeFlag is a byte size flag: 20GiB, 512MiB, 1.5GB or bytes.
type sizeFlag int64

func (s *sizeFlag) String() string { return fmt.Sprint(int64(*s)) }

func (s *sizeFlag) Set(v string) error {
	n, err := text.ParseBytes(v)
	*s = sizeFlag(n)
	return err
}

func runCachePrune(c *Command, args []string) error {
	fs := c.newFlags("cache prune", "[--cache DIR | -f FILE] [--max-size SIZE] [--older-than DURATION] [--other-formats] | --remote [URL] --older-than DURATION")
	var maxSize sizeFlag
	fs.Var(&maxSize, "max-size", "remove least recently used entries until the cache holds at most this `size` (20GiB, 512MiB; default: the matrix file's cache: max-size)")
	olderThan := fs.Duration("older-than", 0, "remove entries not used for this `duration` (720h); with --remote, uploaded that long ago")
	otherFormats := fs.Bool("other-formats", false, "remove the folders of older cache formats (v1/ beside v2/), which this version never reads")
	var store storeFlag
	store.register(fs, "remove the shared store's entries uploaded more than --older-than ago, where the store allows deletion")
	where, err := c.cacheFolderFlags(fs, args, &store)
	if err != nil {
		return err
	}
	// 0s or less would remove nothing, or everything: neither is asked
	// for with a duration.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["older-than"] && *olderThan <= 0 {
		return usagef("cache prune: --older-than %s: want a duration above zero, like 720h (entries not used for that long are removed)", *olderThan)
	}
	if store.set {
		return c.pruneStore(store, where, *olderThan, given)
	}
	cc, err := c.openFolder(where, false)
	if err != nil {
		return invalid(err)
	}
	rule := cache.PruneRule{MaxSize: int64(maxSize), UnusedFor: *olderThan, OtherFormats: *otherFormats}
	if rule.MaxSize == 0 {
		rule.MaxSize = cc.MaxSize()
	}
	if rule.MaxSize == 0 && rule.UnusedFor == 0 && !rule.OtherFormats {
		return usagef("cache prune: say what to remove: --max-size SIZE, --older-than DURATION or --other-formats (or a matrix file with cache: max-size)")
	}
	pruned, err := cc.Prune(rule)
	if errors.Is(err, cache.ErrReadOnly) {
		return fmt.Errorf("%s: %w", cc.Dir(), err) // nothing was removed: say only that
	}
	c.printUntrusted(c.Streams.Out, cache.PrunedText(pruned, time.Now(), err != nil))
	c.cacheWarnings(cc.Notices())
	return err
}

// pruneStore is cache prune --remote: by upload time only. A store has no
// "last used" a reader would have to write, and no size a prune could
// keep it under without listing what every runner is about to pull.
func (c *Command) pruneStore(s storeFlag, where *cacheFolder, olderThan time.Duration, given map[string]bool) error {
	var errs []error
	for _, name := range []string{"max-size", "other-formats"} {
		if given[name] {
			errs = append(errs, usagef("cache prune: --%s with --remote: a shared store is pruned by upload time only (--older-than DURATION); --%s is for a cache folder", name, name))
		}
	}
	if !given["older-than"] {
		errs = append(errs, usagef("cache prune --remote: say what to remove: --older-than DURATION (entries uploaded that long ago)"))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	store, err := c.openStore(s, where)
	if err != nil {
		return err
	}
	pruned, err := cache.PruneStore(context.Background(), store, olderThan, time.Now())
	if errors.Is(err, cache.ErrNoDeletion) {
		return err // nothing was removed: say only that
	}
	c.printUntrusted(c.Streams.Out, cache.StorePrunedText(store.Location(), pruned, time.Now()))
	return err
}

func runCacheVerify(c *Command, args []string) error {
	fs := c.newFlags("cache verify", "[--cache DIR | -f FILE]")
	cc, err := c.openCacheFolder(fs, args, false)
	if err != nil {
		return invalid(err)
	}
	checked, bad, err := cc.Verify()
	if err != nil {
		return err
	}
	if len(bad) == 0 {
		fmt.Fprintf(c.Streams.Out, "%s ok\n", text.Count(checked, "entry"))
		return nil
	}
	problems := make([]error, len(bad))
	for i, p := range bad {
		problems[i] = p
	}
	return errors.Join(problems...)
}
