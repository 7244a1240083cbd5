package cli

import (
	"flag"
	"fmt"
	"slices"
	"sync"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/build"
	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
)

// The engine cache in a build run: --cache DIR (or the matrix's
// cache.dir) turns it on, --no-cache bypasses it for one run, --rebuild
// NAME builds those builds without asking it (and stores their engines).

// cacheFlags are build's engine cache flags.
type cacheFlags struct {
	dir     string   // --cache
	off     bool     // --no-cache
	rebuild listFlag // --rebuild
}

func (f *cacheFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "cache", "", "the engine cache `folder` (instead of the matrix's cache.dir)")
	fs.BoolVar(&f.off, "no-cache", false, "neither read nor write the engine cache in this run")
	fs.Var(&f.rebuild, "rebuild", "build this `name` or glob without asking the engine cache, and store its engine (repeatable, or comma-separated)")
}

// cacheDir is the cache folder of the run: --cache, else the matrix's
// cache.dir; "" when the cache is off.
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

// check refuses flags that contradict each other or would do nothing,
// all at once. builds are the builds the run selected (after --only).
func (f *cacheFlags) check(file *matrix.File, builds []matrix.Build) []error {
	var errs []error
	if f.off && f.dir != "" {
		errs = append(errs, usagef("--cache %q and --no-cache: give one (--no-cache runs without the cache; --cache names its folder)", f.dir))
	}
	if len(f.rebuild) == 0 {
		return errs
	}
	switch {
	case f.off:
		errs = append(errs, usagef("--rebuild %s and --no-cache: give one (--no-cache already builds everything and stores nothing; --rebuild builds the named builds and stores their engines)", f.rebuild.String()))
	case f.cacheDir(file) == "":
		errs = append(errs, usagef("--rebuild %s: there is no engine cache to bypass; turn it on with --cache DIR or cache: {dir: ...} in %s", f.rebuild.String(), file.Path))
	default:
		// The same patterns as --only, among the builds this run has.
		run := &matrix.File{Path: file.Path, Builds: builds}
		if _, err := run.Select(f.rebuild); err != nil {
			errs = append(errs, usagef("--rebuild: %v", err))
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

// engineCache opens the run's cache, names once the library each backend
// of builds loads and, for tensorrt builds, the model of each GPU they may
// run on (devices; none without --gpus), and tells on stderr, once, what
// limits the cache in this run: a read-only folder, a library or GPU it
// cannot name. nil when the cache is off.
func (c *Command) engineCache(f *cacheFlags, file *matrix.File, builds []matrix.Build, libPath string, devices []string) (*build.EngineCache, error) {
	dir := f.cacheDir(file)
	if dir == "" {
		return nil, nil
	}
	opts := cache.Options{Dir: dir}
	if file.Cache != nil {
		opts.MaxSize = file.Cache.MaxSize
	}
	store, err := cache.Open(opts)
	if err != nil {
		return nil, usagef("--cache %q: %v", dir, err)
	}
	if store.ReadOnly() {
		c.cacheNotice("engine cache %s is read-only: engines are taken from it, none is stored", dir)
	}
	envs := c.cacheEnvs(builds, libPath, devices)
	for _, p := range envs.problems {
		c.cacheNotice("engine cache: %s", p)
	}
	return &build.EngineCache{Cache: store, Hasher: cache.NewHasher(), Rebuild: f.rebuilds(builds), Env: envs.env}, nil
}

// cacheEnvs is what keys need beyond the builds, named once per run: the
// library of each backend, and for tensorrt the model of each GPU.
type cacheEnvs struct {
	known    map[envKey]knownEnv
	problems []string // what could not be named, once each: those builds run uncached
}

type envKey struct{ backend, gpu string }

type knownEnv struct {
	env cache.Env
	err error
}

// env is build.EngineCache.Env.
func (e *cacheEnvs) env(backend, gpu string) (cache.Env, error) {
	k, ok := e.known[envKey{backend, gpu}]
	if !ok {
		return cache.Env{}, fmt.Errorf("backend %s on GPU %q was not named before the run", backend, gpu)
	}
	return k.env, k.err
}

// cacheEnvs names, before any build starts, the library of every backend
// in builds and the target of every GPU a tensorrt build may get (devices;
// none: wherever CUDA puts it). It reads files and asks nvidia-smi, never
// loads TensorRT.
func (c *Command) cacheEnvs(builds []matrix.Build, libPath string, devices []string) *cacheEnvs {
	e := &cacheEnvs{known: map[envKey]knownEnv{}}
	slots := devices
	if len(slots) == 0 {
		slots = []string{""}
	}
	targets := sync.OnceValue(func() map[string]knownEnv { return c.gpuTargets(slots, e) })
	var backends []string
	for _, b := range builds {
		if !slices.Contains(backends, b.Backend) {
			backends = append(backends, b.Backend)
		}
	}
	for _, backend := range backends {
		lib, err := cache.LibraryIdentity(backend, libPath)
		if err != nil {
			e.problems = append(e.problems, fmt.Sprintf("%s builds run without it: %v", backend, err))
		}
		for _, gpu := range slots {
			k := knownEnv{env: cache.Env{Library: lib}, err: err}
			if backend == "tensorrt" && err == nil {
				t := targets()[gpu]
				k.env.Target, k.err = t.env.Target, t.err
			}
			e.known[envKey{backend, gpu}] = k
		}
	}
	return e
}

// gpuTargets asks nvidia-smi once for the model of each slot's GPU ("":
// wherever CUDA puts a build).
func (c *Command) gpuTargets(slots []string, e *cacheEnvs) map[string]knownEnv {
	out := map[string]knownEnv{}
	models, err := gpus.NvidiaSMIModels()
	for _, gpu := range slots {
		var k knownEnv
		if err == nil {
			k.env.Target, k.err = gpus.TargetOf(gpu, c.Getenv("CUDA_VISIBLE_DEVICES"), models)
		} else {
			k.err = err
		}
		if k.err != nil {
			where := "its GPU"
			if gpu != "" {
				where = "GPU " + gpu
			}
			e.problems = append(e.problems, fmt.Sprintf("tensorrt builds on %s run without it: %v", where, k.err))
			k.err = fmt.Errorf("the GPU a tensorrt build runs on is part of its key, and it is not known: %w", k.err)
		}
		out[gpu] = k
	}
	return out
}

// cacheNotice tells, once, what limits the engine cache in this run: a
// notice annotation in Actions, a line on stderr elsewhere.
func (c *Command) cacheNotice(format string, args ...any) {
	c.note(c.actions(), actions.LevelNotice, "trt-action: engine cache", fmt.Sprintf(format, args...))
}

// planKeys gives plan --json each build's engine cache key, computed as a
// build run would without loading TensorRT: the library named from its
// files (TRT_ACTION_RTX_LIB, TRT_ACTION_TRT_LIB), the GPU from nvidia-smi
// where there is one. A plan job may lack the models; then the key is
// null, with the file it could not read.
func (c *Command) planKeys(builds []matrix.Build) matrix.PlanKeys {
	envs := c.cacheEnvs(builds, "", nil)
	hasher := cache.NewHasher()
	return func(b matrix.Build) (string, string) {
		env, err := envs.env(b.Backend, "")
		if err != nil {
			return "", err.Error()
		}
		key, err := hasher.Key(b, env)
		if err != nil {
			return "", err.Error()
		}
		return string(key), ""
	}
}
