package cache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/matrix"
)

// A tensorrt build's key has the model of the GPU it gets: with --gpus,
// each GPU's own; without, the machine's GPUs must be alike, else those
// builds run uncached and the run says so once.
func TestTensorRTKeysNameTheGPU(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"libnvinfer.so.10", "libnvonnxparser.so.10"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("stand-in "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TRT_ACTION_TRT_LIB", dir)
	smi := "#!/bin/sh\nprintf '0, GPU-aaaa, NVIDIA L4, 8.9\\n1, GPU-bbbb, NVIDIA A100-SXM4-80GB, 8.0\\n'\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(smi), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	builds := []matrix.Build{{Name: "t", Backend: "tensorrt"}, {Name: "s", Backend: "sim"}}
	envs := NameEnvs(NewHasher(), builds, "", []string{"0", "1"}, "")
	l4, err0 := envs.Env(builds[0], "0")
	a100, err1 := envs.Env(builds[0], "1")
	sim, errSim := envs.Env(builds[1], "1")
	if err0 != nil || err1 != nil || errSim != nil || len(envs.Problems) != 0 {
		t.Fatalf("with --gpus 0,1: %v, %v, %v, problems %q", err0, err1, errSim, envs.Problems)
	}
	if l4.Target != "NVIDIA L4, compute capability 8.9" || a100.Target != "NVIDIA A100-SXM4-80GB, compute capability 8.0" ||
		l4.Library == "" || l4.Library != a100.Library || sim.Target != "" {
		t.Errorf("envs: GPU 0 %+v, GPU 1 %+v, sim %+v", l4, a100, sim)
	}

	envs = NameEnvs(NewHasher(), builds, "", nil, "")
	if _, err := envs.Env(builds[0], ""); err == nil || !strings.Contains(err.Error(), "the GPUs differ") {
		t.Errorf("without --gpus on unlike GPUs: %v", err)
	}
	if len(envs.Problems) != 1 || !strings.HasPrefix(envs.Problems[0], "tensorrt builds on its GPU run without it: the GPUs differ") {
		t.Errorf("problems told: %q", envs.Problems)
	}

	// Without a library to name (a folder that has none), that is the
	// reason, whatever the GPU.
	t.Setenv("TRT_ACTION_TRT_LIB", t.TempDir())
	envs = NameEnvs(NewHasher(), builds, "", []string{"0"}, "")
	if _, err := envs.Env(builds[0], "0"); !isLibraryUnknown(err) || len(envs.Problems) != 1 {
		t.Errorf("without TRT_ACTION_TRT_LIB: %v, problems %q; want the library named as the reason, once", err, envs.Problems)
	}
}

// A build with run: without inputs: is never cached: it has no key
// (ErrNoInputs, which plan --json shows as the reason), and a run of such
// builds names no library (one that is not there is no problem of theirs).
func TestScriptBuildsWithoutInputsHaveNoKey(t *testing.T) {
	t.Setenv("TRT_ACTION_TRT_LIB", t.TempDir()) // no library to name
	script := matrix.Build{Name: "s", Backend: "tensorrt", Script: &matrix.Script{Argv: []string{"python", "build.py"}}}
	if _, err := NewHasher().Key(context.Background(), script, Env{Library: "x"}); !errors.Is(err, ErrNoInputs) {
		t.Errorf("key of a build with run: %v, want ErrNoInputs", err)
	}
	if envs := NameEnvs(NewHasher(), []matrix.Build{script}, "", nil, ""); len(envs.Problems) != 0 {
		t.Errorf("problems told for a build with run: %q", envs.Problems)
	}
	key, why := PlanKeys([]matrix.Build{script}, "")(script)
	if key != "" || why != ErrNoInputs.Error() {
		t.Errorf("plan key %q, %q", key, why)
	}
}
