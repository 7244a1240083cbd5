package cli

import (
	"flag"
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/build"
	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/text"
)

// The engine cache in a build run: --cache DIR (or the matrix's
// cache.dir) turns it on, --no-cache bypasses it for one run, --rebuild
// NAME builds those builds without asking it (and their engines replace
// the entries).

// cacheFlags are build's engine cache flags.
type cacheFlags struct {
	dir     string      // --cache
	off     bool        // --no-cache
	rebuild listFlag    // --rebuild
	remote  remoteFlags // --cache-remote, --cache-remote-mode, --cache-push-timeout
}

func (f *cacheFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "cache", "", "the engine cache `folder` (instead of the matrix's cache.dir)")
	fs.BoolVar(&f.off, "no-cache", false, "neither read nor write the engine cache (its folder or a shared store) in this run")
	fs.Var(&f.rebuild, "rebuild", "build this `name` or glob without asking the engine cache; its engine replaces the entry (repeatable, or comma-separated)")
	f.remote.register(fs)
}

// cacheDir is the cache folder of the run: --cache, else the matrix's
// cache.dir; "" when the cache is off. The matrix's max-size holds for
// either folder.
func (f *cacheFlags) cacheDir(file *matrix.File) string {
	switch {
	case f.off:
		return ""
	case f.dir != "":
		return f.dir
	case file.Cache != nil:
		return file.Cache.Dir
	}
	return ""
}

// folder is the run's cache folder for runfiles.Check, named as the user
// named it; none when the cache is off.
func (f *cacheFlags) folder(file *matrix.File) []runfiles.File {
	dir := f.cacheDir(file)
	switch {
	case dir == "":
		return nil
	case f.dir != "":
		return []runfiles.File{{Path: dir, Role: runfiles.Folder, What: "--cache", Noun: "the engine cache folder (--cache)"}}
	}
	return []runfiles.File{{Path: dir, Role: runfiles.Folder, What: "cache.dir", Noun: "the engine cache folder", Pos: file.Cache.DirPos.String()}}
}

// origin names where the run's cache folder was given, for its errors:
// `--cache ".trt-cache"`, or `trt-builds.yml:2:1: cache: dir ".trt-cache"`.
func (f *cacheFlags) origin(file *matrix.File) string {
	if f.dir != "" {
		return fmt.Sprintf("--cache %q", f.dir)
	}
	return fmt.Sprintf("%s: cache: dir %q", file.Cache.Pos, file.Cache.Dir)
}

// check refuses flags that contradict each other or would do nothing,
// all at once. builds are the builds the run selected (after --only);
// getenv reads TRT_ACTION_CACHE_REMOTE.
func (f *cacheFlags) check(file *matrix.File, builds []matrix.Build, getenv func(string) string) []error {
	noFolder := !f.off && f.dir == "" && file.Cache != nil && file.Cache.Dir == ""
	// A store with no folder is said once: as the cache key's, when it is.
	errs := f.remote.check(file, getenv, f.off, f.cacheDir(file) != "" || noFolder)
	if f.off && f.dir != "" {
		errs = append(errs, usagef("--cache %q and --no-cache: give one (--no-cache runs without the cache; --cache names its folder)", f.dir))
	}
	if noFolder {
		errs = append(errs, usagef("%s: cache: no folder for the engine cache: give cache: {dir: ...}, --cache DIR or the action's cache input (or --no-cache)", file.Cache.Pos))
	}
	if len(f.rebuild) == 0 {
		return errs
	}
	switch {
	case noFolder: // said above
	case f.off:
		errs = append(errs, usagef("--rebuild %s and --no-cache: give one (--no-cache already builds everything and stores nothing; --rebuild builds the named builds and stores their engines)", f.rebuild.String()))
	case f.cacheDir(file) == "":
		errs = append(errs, usagef("--rebuild %s: there is no engine cache to bypass; turn it on with --cache DIR or cache: {dir: ...} in %s", f.rebuild.String(), file.Path))
	default:
		// The same patterns as --only, among the builds this run has.
		run := &matrix.File{Path: file.Path, Builds: builds}
		chosen, err := run.Select(f.rebuild)
		if err != nil {
			errs = append(errs, usagef("--rebuild: %v", err))
		} else if names := uncachedScripts(chosen); len(names) == len(chosen) {
			errs = append(errs, usagef("--rebuild %s: %s run a command (run:) without inputs:, which is never cached, so there is no entry to replace", f.rebuild.String(), strings.Join(names, ", ")))
		}
	}
	return errs
}

// rebuilds is --rebuild as a test of a build's name.
func (f *cacheFlags) rebuilds(builds []matrix.Build) func(string) bool {
	picked := map[string]bool{}
	if len(f.rebuild) > 0 {
		chosen, _ := (&matrix.File{Builds: builds}).Select(f.rebuild) // checked already
		for _, b := range chosen {
			picked[b.Name] = true
		}
	}
	return func(name string) bool { return picked[name] }
}

// engineCache opens the run's cache, and the shared store behind it
// (openShared), names once the library each backend of builds loads and,
// for tensorrt builds, the model of each GPU they may run on (devices;
// none without --gpus), and tells on stderr, once, what limits the cache
// in this run: a read-only folder or store, a library or GPU it cannot
// name. nil when the cache is off; the store nil without one.
func (c *Command) engineCache(f *cacheFlags, file *matrix.File, builds []matrix.Build, libPath string, devices []string) (*build.EngineCache, *sharedStore, error) {
	dir := f.cacheDir(file)
	if dir == "" {
		return nil, nil, nil
	}
	shared, err := c.openShared(&f.remote, file)
	if err != nil {
		return nil, nil, err
	}
	opts := cache.Options{Dir: dir}
	if file.Cache != nil {
		opts.MaxSize = file.Cache.MaxSize
	}
	store, err := cache.Open(opts)
	if err != nil {
		return nil, nil, usagef("%s: %v", f.origin(file), err)
	}
	c.cacheWarnings(store.Notices()) // a link where its staging folder belongs, removed
	if store.ReadOnly() {
		c.cacheNotice("engine cache %s is read-only: engines are taken from it, none is stored", dir)
	}
	hasher := cache.NewHasher()
	envs := cache.NameEnvs(hasher, builds, libPath, devices, c.Getenv("CUDA_VISIBLE_DEVICES"))
	for _, p := range envs.Problems {
		c.cacheNotice("engine cache: %s", p)
	}
	ec := &build.EngineCache{Cache: store, Hasher: hasher, Rebuild: f.rebuilds(builds), Env: envs.Env}
	if shared != nil && shared.store != nil {
		ec.Remote, ec.RemoteMode, ec.PushTimeout = shared.store, shared.mode, f.remote.pushTimeout
	}
	return ec, shared, nil
}

// cacheNotice tells, once, what limits the engine cache in this run: a
// notice annotation in Actions, a line on stderr elsewhere. It quotes
// paths from the matrix and errors: one line, without control characters.
func (c *Command) cacheNotice(format string, args ...any) {
	c.note(c.actions(), actions.LevelNotice, "trt-action: engine cache", text.Line(fmt.Sprintf(format, args...)))
}

// uncachedScripts names the builds that run a command (run:) and declare
// no inputs, which the engine cache never holds.
func uncachedScripts(builds []matrix.Build) []string {
	var names []string
	for _, b := range builds {
		if b.Script != nil && !b.Script.Cached() {
			names = append(names, b.Name)
		}
	}
	return names
}
