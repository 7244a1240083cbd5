package cli

import (
	"fmt"
	"slices"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
)

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
