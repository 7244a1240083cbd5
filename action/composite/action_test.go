package composite

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// compositeAction is the part of action.yml the runner executes.
type compositeAction struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Steps []struct {
			ID  string            `yaml:"id"`
			If  string            `yaml:"if"`
			Env map[string]string `yaml:"env"`
			Run string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// expr evaluates the few expression forms action.yml uses: a context value
// (inputs.x, github.x, steps.x.outputs.y) and `a || b`.
var exprRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

func evaluate(text string, ctx map[string]string) string {
	return exprRE.ReplaceAllStringFunc(text, func(m string) string {
		for _, alt := range strings.Split(exprRE.FindStringSubmatch(m)[1], "||") {
			if v := ctx[strings.TrimSpace(alt)]; v != "" {
				return v
			}
		}
		return ""
	})
}

// The composite action as the runner would run it, step by step, with the
// action at OWNER/trt-action/action/composite@v9.8.7 on an ARM64 runner:
// the install step downloads the arm64 release of the action's own ref from
// the fake server, and the build step execs that binary with the inputs.
func TestCompositeActionInstallsAndExecsTheRelease(t *testing.T) {
	raw, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var action compositeAction
	if err := yaml.Unmarshal(raw, &action); err != nil {
		t.Fatal(err)
	}
	_, srv := newRelease(t, false)

	// The runner's checkout of the action: the script and action.yml under
	// _actions/OWNER/REPO/REF/action/composite.
	actionPath := filepath.Join(t.TempDir(), "_actions", "trt-action", "trt-action", version, "action", "composite")
	if err := os.MkdirAll(actionPath, 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("install")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(actionPath, "install"), script, 0o755); err != nil {
		t.Fatal(err)
	}

	ctx := map[string]string{
		"github.action_path": actionPath,
		"github.action_ref":  "", // empty in composite steps (actions/runner#2473)
		"github.token":       "t0ken",
		"inputs.release-url": srv.URL,
		"inputs.matrix":      "engines.yml",
		"inputs.gpus":        "all",
		// The shared store's inputs reach their flags.
		"inputs.cache-remote":      "oci://ghcr.io/acme/engines",
		"inputs.cache-remote-mode": "read-only",
	}
	for name, in := range action.Inputs {
		if _, set := ctx["inputs."+name]; !set {
			ctx["inputs."+name] = evaluate(in.Default, ctx)
		}
	}
	work := t.TempDir()
	cache := t.TempDir()
	var lastOut string
	for _, step := range action.Runs.Steps {
		if step.If != "" && step.If != "inputs.binary == ''" {
			t.Fatalf("step %s: condition %q is not understood by this test", step.ID, step.If)
		}
		if step.If != "" && ctx["inputs.binary"] != "" {
			continue
		}
		outputs := filepath.Join(t.TempDir(), "output")
		env := []string{"PATH=" + os.Getenv("PATH"), "RUNNER_OS=Linux", "RUNNER_ARCH=ARM64",
			"RUNNER_TOOL_CACHE=" + cache, "GITHUB_OUTPUT=" + outputs}
		for k, v := range step.Env {
			env = append(env, k+"="+evaluate(v, ctx))
		}
		cmd := exec.Command("bash", "-e", "-c", step.Run)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("step %s: %v\n%s", step.ID, err, out)
		}
		lastOut = string(out)
		if data, err := os.ReadFile(outputs); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					ctx["steps."+step.ID+".outputs."+k] = v
				}
			}
		}
	}
	bin := ctx["steps.install.outputs.binary"]
	if !strings.HasPrefix(bin, filepath.Join(cache, "trt-action", "trt-action_"+version+"_linux_arm64-")) {
		t.Fatalf("install step output binary=%q, want the arm64 release in the tool cache", bin)
	}
	want := "fake trt-action arm64 build -f engines.yml --report trt-report.json --comment pull-request --check-run=false --fail-on budget --gpus all --cache-remote oci://ghcr.io/acme/engines --cache-remote-mode read-only"
	if strings.TrimSpace(lastOut) != want {
		t.Fatalf("the build step ran:\n%s\nwant:\n%s", lastOut, want)
	}
}
