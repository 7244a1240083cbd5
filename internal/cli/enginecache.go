package cli

import (
	"flag"
	"fmt"
	"slices"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/build"
	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/text"
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
		return []runfiles.File{{Path: dir, Role: runfiles.Folder, What: "--cache"}}
	}
	return []runfiles.File{{Path: dir, Role: runfiles.Folder, What: "the engine cache folder", Pos: file.Cache.Pos.String()}}
}

// check refuses flags that contradict each other or would do nothing,
// all at once. builds are the builds the run selected (after --only).
func (f *cacheFlags) check(file *matrix.File, builds []matrix.Build) []error {
	var errs []error
	if f.off && f.dir != "" {
		errs = append(errs, usagef("--cache %q and --no-cache: give one (--no-cache runs without the cache; --cache names its folder)", f.dir))
	}
	noFolder := !f.off && f.dir == "" && file.Cache != nil && file.Cache.Dir == ""
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
	hasher := cache.NewHasher()
	envs := c.cacheEnvs(hasher, builds, libPath, devices)
	for _, p := range envs.problems {
		c.cacheNotice("engine cache: %s", p)
	}
	return &build.EngineCache{Cache: store, Hasher: hasher, Rebuild: f.rebuilds(builds), Env: envs.env}, nil
}

// cacheEnvs is what keys need beyond the builds, named once per run: the
// library of each backend (remembered by the run's Hasher), and for
// tensorrt the model of each GPU a build may get.
type cacheEnvs struct {
	hasher   *cache.Hasher
	libPath  string
	targets  map[string]target // by GPU ("": wherever CUDA puts a build)
	problems []string          // what could not be named, once each: those builds run uncached
}

type target struct {
	name string
	err  error
}

// env is build.EngineCache.Env.
func (e *cacheEnvs) env(backend, gpu string) (cache.Env, error) {
	if backend != "tensorrt" {
		return e.hasher.Env(backend, e.libPath, "")
	}
	if _, err := e.hasher.Env(backend, e.libPath, ""); err != nil {
		return cache.Env{}, err // the library first: without it, no GPU was asked about
	}
	t, ok := e.targets[gpu]
	switch {
	case !ok:
		return cache.Env{}, fmt.Errorf("GPU %q was not named before the run", gpu)
	case t.err != nil:
		return cache.Env{}, fmt.Errorf("the GPU a tensorrt build runs on is part of its key, and it is not known: %w", t.err)
	}
	return e.hasher.Env(backend, e.libPath, t.name)
}

// cacheEnvs names, before any build starts, the library of every backend
// in builds and the model of every GPU a tensorrt build may get (devices;
// none: wherever CUDA puts it), so what cannot be named is told once. It
// reads files and asks nvidia-smi, never loads TensorRT.
func (c *Command) cacheEnvs(hasher *cache.Hasher, builds []matrix.Build, libPath string, devices []string) *cacheEnvs {
	e := &cacheEnvs{hasher: hasher, libPath: libPath}
	var backends []string
	for _, b := range builds {
		if !slices.Contains(backends, b.Backend) {
			backends = append(backends, b.Backend)
		}
	}
	for _, backend := range backends {
		if _, err := hasher.Env(backend, libPath, ""); err != nil {
			e.problems = append(e.problems, fmt.Sprintf("%s builds run without it: %v", backend, err))
		} else if backend == "tensorrt" {
			e.targets = c.gpuTargets(devices, e)
		}
	}
	return e
}

// gpuTargets asks nvidia-smi once for the model of each GPU in devices (or
// with none, of the GPU CUDA would pick).
func (c *Command) gpuTargets(devices []string, e *cacheEnvs) map[string]target {
	if len(devices) == 0 {
		devices = []string{""}
	}
	out := map[string]target{}
	models, err := gpus.NvidiaSMIModels()
	for _, gpu := range devices {
		t := target{err: err}
		if err == nil {
			t.name, t.err = gpus.TargetOf(gpu, c.Getenv("CUDA_VISIBLE_DEVICES"), models)
		}
		if t.err != nil {
			where := "its GPU"
			if gpu != "" {
				where = "GPU " + gpu
			}
			e.problems = append(e.problems, fmt.Sprintf("tensorrt builds on %s run without it: %v", where, t.err))
		}
		out[gpu] = t
	}
	return out
}

// cacheNotice tells, once, what limits the engine cache in this run: a
// notice annotation in Actions, a line on stderr elsewhere. It quotes
// paths from the matrix and errors: one line, without control characters.
func (c *Command) cacheNotice(format string, args ...any) {
	c.note(c.actions(), actions.LevelNotice, "trt-action: engine cache", text.Line(fmt.Sprintf(format, args...)))
}

// planKeys gives plan --json each build's engine cache key, computed as a
// build run would without loading TensorRT: the library named from its
// files (--trt-lib, TRT_ACTION_RTX_LIB, TRT_ACTION_TRT_LIB, else where the
// dynamic loader would find it), the GPU from nvidia-smi
// where there is one. A plan job may lack the models; then the key is
// null, with the file it could not read.
func (c *Command) planKeys(builds []matrix.Build) matrix.PlanKeys {
	hasher := cache.NewHasher()
	envs := c.cacheEnvs(hasher, builds, "", nil)
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
