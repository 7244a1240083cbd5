package build

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/pyhook"
)

// The environment a script build's command starts with: the run's own,
// less trt-action's tokens, plus the build's env:, plus what the hook
// needs to load and to find the supervisor.

type scriptEnv struct {
	extra    []string // env: as NAME=value
	hookPath string   // the hook's folder, first on PYTHONPATH; "" for none
	native   string   // the folder of trt-action's native libraries; "" leaves builds on the Python monitor
	socket   string
	gpu      string // --gpus: this build's GPU
}

// scriptEnviron is the command's environment. A workflow's own tokens for
// trt-action (its inputs, the runtime's) are left out: the command is the
// user's and gets what its step gives it, not what the action was given.
// PYTHONUNBUFFERED is set unless the build sets it, so the program's
// output reaches its log group as it prints it, not when a buffer fills.
func scriptEnviron(base []string, e scriptEnv) ([]string, error) {
	vars := map[string]string{}
	var order []string
	set := func(kv string) {
		name, value, _ := strings.Cut(kv, "=")
		if _, ok := vars[name]; !ok {
			order = append(order, name)
		}
		vars[name] = value
	}
	for _, kv := range base {
		if !isToken(kv, actionTokenPrefixes...) {
			set(kv)
		}
	}
	for _, kv := range e.extra {
		set(kv)
	}
	if _, ok := vars["PYTHONUNBUFFERED"]; !ok {
		set("PYTHONUNBUFFERED=1")
	}
	if e.hookPath != "" {
		if strings.Contains(e.hookPath, ":") {
			return nil, fmt.Errorf("the hook's folder %q holds a colon, which PYTHONPATH cannot carry", e.hookPath)
		}
		path := e.hookPath
		if old := vars["PYTHONPATH"]; old != "" {
			path += ":" + old
		}
		set("PYTHONPATH=" + path)
		set(pyhook.EnvHookDir + "=" + e.hookPath)
		set(pyhook.EnvSupervisor + "=" + e.socket)
		if e.native != "" {
			set(pyhook.EnvNativeDir + "=" + e.native)
		}
	}
	if e.gpu != "" {
		// nvidia-smi numbers GPUs by PCI bus; make CUDA agree with it.
		set(gpus.Env(e.gpu))
		set("CUDA_DEVICE_ORDER=PCI_BUS_ID")
	}
	out := make([]string, 0, len(order))
	for _, name := range order {
		out = append(out, name+"="+vars[name])
	}
	slices.Sort(out)
	return out, nil
}

// actionTokenPrefixes are the variables that hold the tokens a workflow
// gave trt-action itself: its inputs (INPUT_GITHUB-TOKEN) and the
// runtime's. A worker is given none of GITHUB_'s either (workerEnviron);
// a command is the user's, and keeps what its step gave it.
var actionTokenPrefixes = []string{"INPUT_", "ACTIONS_"}
