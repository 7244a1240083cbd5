package cache

import (
	"context"
	"fmt"
	"slices"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
)

// RunEnvs is what keys need beyond the builds, named once per run: the
// library of each backend (remembered by the run's Hasher), and for
// tensorrt the model of each GPU a build may get.
type RunEnvs struct {
	hasher  *Hasher
	libPath string
	targets map[string]target // by GPU ("": wherever CUDA puts a build)
	// Problems is what could not be named, once each: those builds run
	// uncached. The caller tells them once.
	Problems []string
}

type target struct {
	name string
	err  error
}

// Env is a build's environment, for build.EngineCache.Env: the library b
// loads (Hasher.BuildEnv) and, for tensorrt, the model of gpu.
func (e *RunEnvs) Env(b matrix.Build, gpu string) (Env, error) {
	env, err := e.hasher.BuildEnv(b, e.libPath, "")
	if err != nil || backend.Of(b.Backend).Target != backend.TargetBuildGPU {
		return env, err // the library first: without it, no GPU was asked about
	}
	t, ok := e.targets[gpu]
	switch {
	case !ok:
		return Env{}, fmt.Errorf("GPU %q was not named before the run", gpu)
	case t.err != nil:
		return Env{}, fmt.Errorf("the GPU a %s build runs on is part of its key, and it is not known: %w", b.Backend, t.err)
	}
	return e.hasher.BuildEnv(b, e.libPath, t.name)
}

// NameEnvs names, before any build starts, the library of every backend
// of the builds without run: and the model of every GPU a cached tensorrt
// build may get (devices; none: wherever CUDA puts it; visible is
// CUDA_VISIBLE_DEVICES), so what cannot be named is told once. It reads
// files and asks nvidia-smi, never loads TensorRT. A build with run:
// names its library when its key is computed: its program's environment
// may hold the library its bindings load (Hasher.BuildEnv); one without
// inputs: has no key.
func NameEnvs(hasher *Hasher, builds []matrix.Build, libPath string, devices []string, visible string) *RunEnvs {
	e := &RunEnvs{hasher: hasher, libPath: libPath}
	var backends []string
	onGPU := false
	for _, b := range builds {
		if b.Script == nil && !slices.Contains(backends, b.Backend) {
			backends = append(backends, b.Backend)
		}
		if b.Script != nil && b.Script.Cached() {
			onGPU = onGPU || backend.Of(b.Backend).Target == backend.TargetBuildGPU
		}
	}
	for _, name := range backends {
		if _, err := hasher.Env(name, libPath, ""); err != nil {
			e.Problems = append(e.Problems, fmt.Sprintf("%s builds run without it: %v", name, err))
		} else if backend.Of(name).Target == backend.TargetBuildGPU {
			onGPU = true
		}
	}
	if onGPU {
		e.targets = e.gpuTargets(devices, visible)
	}
	return e
}

// gpuTargets asks nvidia-smi once for the model of each GPU in devices (or
// with none, of the GPU CUDA would pick).
func (e *RunEnvs) gpuTargets(devices []string, visible string) map[string]target {
	if len(devices) == 0 {
		devices = []string{""}
	}
	out := map[string]target{}
	models, err := gpus.NvidiaSMIModels()
	for _, gpu := range devices {
		t := target{err: err}
		if err == nil {
			t.name, t.err = gpus.TargetOf(gpu, visible, models)
		}
		if t.err != nil {
			where := "its GPU"
			if gpu != "" {
				where = "GPU " + gpu
			}
			e.Problems = append(e.Problems, fmt.Sprintf("%s builds on %s run without it: %v", backend.TensorRT, where, t.err))
		}
		out[gpu] = t
	}
	return out
}

// PlanKeys gives plan --json each build's engine cache key, computed as a
// build run would without loading TensorRT: the library named from its
// files (--trt-lib, TRT_ACTION_RTX_LIB, TRT_ACTION_TRT_LIB, else where the
// dynamic loader would find it), the GPU from nvidia-smi
// where there is one (visible is CUDA_VISIBLE_DEVICES). A plan job may
// lack the models (or a build with run: its inputs); then the key is
// null, with the file it could not read. A build with run: without
// inputs: has none, and says why (ErrNoInputs).
func PlanKeys(builds []matrix.Build, visible string) matrix.PlanKeys {
	hasher := NewHasher()
	envs := NameEnvs(hasher, builds, "", nil, visible)
	return func(b matrix.Build) (string, string) {
		if b.Script != nil && !b.Script.Cached() {
			return "", ErrNoInputs.Error()
		}
		env, err := envs.Env(b, "")
		if err != nil {
			return "", err.Error()
		}
		key, err := hasher.Key(context.Background(), b, env)
		if err != nil {
			return "", err.Error()
		}
		return string(key), ""
	}
}
