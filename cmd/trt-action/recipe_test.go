package main

// The actions/cache recipes (docs/engine-cache.md's single job and sharded steps,
// example-gpu.yml's cached job) run step by step, three runs in a row,
// with the real binary and a stand-in for GitHub's cache service that
// keeps to its documented rules. A build that fails in the first run and
// succeeds in the second must be a hit in the third.

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// actionsCache is GitHub's cache service as its documentation describes
// it: the key is looked up exactly, then as a prefix, then each restore
// key in order, exactly or as a prefix; among prefix matches the most
// recently created entry wins. An entry never changes: a save under a key
// that exists saves nothing.
type actionsCache struct {
	keys []string // in the order they were created
	dirs map[string]string
}

func (c *actionsCache) lookup(key string, restoreKeys []string) (string, bool) {
	for _, k := range append([]string{key}, restoreKeys...) {
		if _, ok := c.dirs[k]; ok {
			return k, true
		}
		for i := len(c.keys) - 1; i >= 0; i-- {
			if strings.HasPrefix(c.keys[i], k) {
				return c.keys[i], true
			}
		}
	}
	return "", false
}

// save copies dir under key unless key exists; it reports whether it did.
func (c *actionsCache) save(t *testing.T, key, dir string) bool {
	if _, ok := c.dirs[key]; ok {
		return false
	}
	copyDir(t, dir, filepath.Join(t.TempDir(), "saved"), &c.dirs, key)
	c.keys = append(c.keys, key)
	return true
}

func copyDir(t *testing.T, from, to string, into *map[string]string, key string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp %s: %v\n%s", from, err, out)
	}
	if *into == nil {
		*into = map[string]string{}
	}
	(*into)[key] = to
}

// recipeStep is a workflow step, as far as the recipe uses one.
type recipeStep struct {
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
	With map[string]string `yaml:"with"`
}

// jobRun is one run of a job: its workspace, the expression context and
// what happened.
type jobRun struct {
	t      *testing.T
	ws     string
	ctx    map[string]string // github.run_id, matrix.x, steps.id.outputs.y
	failed bool              // a step failed: steps without always() are skipped
	saved  []string          // the keys this run saved
	skip   []string          // the steps that did not run
	bin    string            // a folder with trt-action in it, for PATH
}

var exprRE = regexp.MustCompile(`\$\{\{\s*([\w.-]+)\s*\}\}`)

// expand replaces each ${{ name }} with its value in the context.
func (j *jobRun) expand(s string) string {
	return exprRE.ReplaceAllStringFunc(s, func(m string) string {
		name := exprRE.FindStringSubmatch(m)[1]
		v, ok := j.ctx[name]
		if !ok && !strings.HasPrefix(name, "steps.") { // a step output not set is ""
			j.t.Fatalf("the recipe uses %s, which this test does not know", name)
		}
		return v
	})
}

var condRE = regexp.MustCompile(`^([\w.-]+) (==|!=) '([^']*)'$`)

// runs evaluates a step's if: always(), comparisons of a context value
// with a string, joined by &&; without always() a step runs only while
// no step failed.
func (j *jobRun) runs(cond string) bool {
	always := false
	for _, term := range strings.Split(strings.TrimSpace(cond), "&&") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		if term == "always()" {
			always = true
			continue
		}
		m := condRE.FindStringSubmatch(term)
		if m == nil {
			j.t.Fatalf("the recipe's condition %q is not one this test evaluates", cond)
		}
		if (j.ctx[m[1]] == m[3]) != (m[2] == "==") {
			return false
		}
	}
	return always || !j.failed
}

func (j *jobRun) do(steps []recipeStep, c *actionsCache) {
	for _, s := range steps {
		if !j.runs(s.If) {
			j.skip = append(j.skip, cmp.Or(s.ID, s.Uses, s.Run))
			continue
		}
		switch {
		case s.Run != "":
			if err := j.shell(s); err != nil {
				j.t.Fatal(err)
			}
		case strings.HasPrefix(s.Uses, "actions/cache/restore@"):
			keys := strings.Fields(j.expand(s.With["restore-keys"]))
			if k, ok := c.lookup(j.expand(s.With["key"]), keys); ok {
				dst := filepath.Join(j.ws, s.With["path"])
				os.RemoveAll(dst)
				copyDir(j.t, c.dirs[k], dst, new(map[string]string), k)
			}
		case strings.HasPrefix(s.Uses, "actions/cache/save@"):
			if key := j.expand(s.With["key"]); c.save(j.t, key, filepath.Join(j.ws, s.With["path"])) {
				j.saved = append(j.saved, key)
			}
		case s.Uses == "./" || strings.Contains(s.Uses, "action/composite"):
			j.build(s)
		}
	}
}

// shell runs a run: step as the runner does (bash -e -o pipefail).
func (j *jobRun) shell(s recipeStep) error {
	out := filepath.Join(j.t.TempDir(), "output")
	cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", s.Run)
	cmd.Dir = j.ws
	cmd.Env = []string{"PATH=" + j.bin + ":" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GITHUB_OUTPUT=" + out}
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+j.expand(v))
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("step %q: %v\n%s", s.ID, err, b)
	}
	j.outputs(s.ID, out)
	return nil
}

// build runs the trt-action step: the action's inputs as build's flags.
func (j *jobRun) build(s recipeStep) {
	args := []string{"build", "--no-color", "-f", "trt-builds.yml"}
	for input, flag := range map[string]string{"matrix": "-f", "cache": "--cache", "only": "--only", "fail-on": "--fail-on"} {
		if v := j.expand(s.With[input]); v != "" {
			args = append(args, flag, v)
		}
	}
	out := filepath.Join(j.t.TempDir(), "output")
	cmd := command(j.ws, []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + out}, args...)
	if b, err := cmd.CombinedOutput(); exitCode(err) != 0 {
		j.failed = true
		j.t.Logf("build step (expected to fail in the first run): exit %d\n%s", exitCode(err), b)
	}
	j.outputs(s.ID, out)
}

// outputs reads a $GITHUB_OUTPUT file into the context as the step's
// outputs.
func (j *jobRun) outputs(id, file string) {
	data, err := os.ReadFile(file)
	if err != nil || id == "" {
		return
	}
	for _, r := range outputRecords(string(data)) {
		j.ctx["steps."+id+".outputs."+r[0]] = r[1]
	}
}

// recipeMatrix has two fast builds; b's build budget is too small in the
// first run. Budgets are not in a key: K is the same in every run.
func recipeMatrix(bBudget string) string {
	return `version: 1
defaults: {backend: sim, sim: {step: 100us}}
builds:
  - {name: a, engine: out/a.engine}
  - {name: b, engine: out/b.engine, sim: {threads: 2}, budgets: {build: ` + bBudget + `}}
`
}

// keyStepFails runs the recipe's key step on a matrix cache key cannot
// read: the step must fail, not hand actions/cache an empty key.
func keyStepFails(t *testing.T, steps []recipeStep, matrixCtx map[string]string) {
	t.Helper()
	j := newJobRun(t, "version: 1\nbuilds: [{name: a, backend: nosuch}]\n", matrixCtx)
	for _, s := range steps {
		if s.ID == "key" {
			if err := j.shell(s); err == nil {
				t.Errorf("the key step succeeded on a matrix cache key refuses; outputs %v", j.ctx)
			}
			return
		}
	}
	t.Fatal("the recipe has no step with id key")
}

// newJobRun is a run on a fresh runner whose workspace has the matrix, as
// trt-builds.yml and examples/trt-builds.yml.
func newJobRun(t *testing.T, matrix string, ctx map[string]string) *jobRun {
	t.Helper()
	bin := t.TempDir()
	abs, err := filepath.Abs(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(bin, "trt-action")); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	for _, path := range []string{"trt-builds.yml", "examples/trt-builds.yml"} {
		writeFile(t, filepath.Join(ws, path), matrix)
	}
	j := &jobRun{t: t, ws: ws, bin: bin, ctx: map[string]string{"github.run_attempt": "1"}}
	for k, v := range ctx {
		j.ctx[k] = v
	}
	return j
}

// checkRecipe runs steps three times: b fails, then is built, then every
// build must be a hit, and a run that stored nothing saves nothing.
func checkRecipe(t *testing.T, steps []recipeStep, matrixCtx map[string]string) {
	t.Helper()
	cache := &actionsCache{}
	for run, budget := range []string{"1ms", "10m", "10m"} {
		j := newJobRun(t, recipeMatrix(budget), matrixCtx)
		j.ctx["github.run_id"] = fmt.Sprint(9001 + run)
		j.do(steps, cache)
		ws := j.ws
		stored, cached := j.ctx["steps.trt.outputs.stored"], 0
		for _, b := range readReport(t, filepath.Join(ws, "trt-report.json")).Builds {
			if b.Status == "cached" {
				cached++
			}
		}
		want := []struct {
			stored        string
			cached, saves int
		}{{"1", 0, 1}, {"1", 1, 1}, {"0", 2, 0}}[run]
		if run == 0 && len(j.skip) > 0 { // the failure is deliberate, as in examples/trt-builds.yml
			t.Errorf("run 1, where a build fails: steps skipped: %q", j.skip)
		}
		if stored != want.stored || cached != want.cached || len(j.saved) != want.saves {
			t.Errorf("run %d: stored %q, %d cached, saved %q; want stored %s, %d cached, %d saves",
				run+1, stored, cached, j.saved, want.stored, want.cached, want.saves)
		}
	}
}

// The engine cache page's single-job recipe.
func TestEngineCachePageActionsCacheRecipeKeepsEveryStoredBuild(t *testing.T) {
	blocks := fenced(section(t, page(t, "docs/engine-cache.md"), "## The engine cache in GitHub Actions"), "yaml")
	if len(blocks) != 2 {
		t.Fatalf("the section has %d yaml blocks; this test knows the single job and the shard steps", len(blocks))
	}
	var wf struct {
		Jobs map[string]struct{ Steps []recipeStep } `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(blocks[0]), &wf); err != nil {
		t.Fatal(err)
	}
	checkRecipe(t, wf.Jobs["engines"].Steps, nil)
	keyStepFails(t, wf.Jobs["engines"].Steps, nil)
}

// The engine cache page's shard steps, as shard 2 of a fan-out.
func TestEngineCachePageShardedActionsCacheRecipeKeepsEveryStoredBuild(t *testing.T) {
	blocks := fenced(section(t, page(t, "docs/engine-cache.md"), "## The engine cache in GitHub Actions"), "yaml")
	var steps []recipeStep
	if len(blocks) != 2 || yaml.Unmarshal([]byte(blocks[1]), &steps) != nil || len(steps) == 0 {
		t.Fatalf("the section's second yaml block is not a list of steps")
	}
	shard := map[string]string{"matrix.only": "a,b", "matrix.shard": "2"}
	checkRecipe(t, steps, shard)
	keyStepFails(t, steps, shard)
}

// example-gpu.yml's cached job, which actionlint checks.
func TestExampleWorkflowCachedJobKeepsEveryStoredBuild(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ".github/workflows/example-gpu.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct{ Steps []recipeStep } `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	checkRecipe(t, wf.Jobs["cached"].Steps, nil)
	keyStepFails(t, wf.Jobs["cached"].Steps, nil)
}
