package matrix

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/runfiles"
)

// scriptFile writes a matrix file (and the folders it names) into a new
// folder beside an (empty) model.onnx and a folder work, and loads it.
func scriptFile(t *testing.T, body string) (*File, string, error) {
	t.Helper()
	dir := realDir(t, t.TempDir())
	if err := os.MkdirAll(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.onnx"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "trt-builds.yml")
	if err := os.WriteFile(m, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := LoadPartial(m)
	return f, dir, err
}

// A build with run: holds its command, env, workdir and engines; the
// builder settings and the onnx, engine and sim keys of defaults do not
// reach it, while its name, backend, env, workdir and budgets do (env
// merged by name, the build's winning; TRT_ACTION_ROUTE=python, the
// one hook variable it may set, taken).
func TestScriptBuild(t *testing.T) {
	f, dir, err := scriptFile(t, `version: 1
defaults:
  backend: tensorrt-rtx
  onnx: model.onnx
  engine: out/default.engine
  workspace: 1GiB
  opt-level: 3
  trtexec: "--fp16"
  sim: {threads: 2}
  env: {A: from-defaults, B: kept}
  workdir: work
  budgets: {build: 2h, stall: 5m}
builds:
  - name: s-${{ matrix.v }}
    run: python build.py --v ${{ matrix.v }} 'a b'
    engine:
      - out/${{ matrix.v }}.engine
      - out/${{ matrix.v }}.json
    env: {A: "${{ matrix.v }}", C: 8, D: true, TRT_ACTION_ROUTE: python}
    budgets: {build: 1h}
    matrix:
      v: [x]
`)
	if err != nil {
		t.Fatal(err)
	}
	b := f.Builds[0]
	want := &Script{
		Argv:      []string{"python", "build.py", "--v", "x", "a b"},
		Env:       []string{"A=x", "B=kept", "C=8", "D=true", "TRT_ACTION_ROUTE=python"},
		Workdir:   filepath.Join(dir, "work"),
		Engines:   []string{filepath.Join(dir, "out/x.engine"), filepath.Join(dir, "out/x.json")},
		EnginePos: []Pos{{f.Path, 17, 9}, {f.Path, 18, 9}},
		RunPos:    Pos{f.Path, 15, 5},
		Workspace: dir,
		Roots:     []string{dir},
	}
	if !reflect.DeepEqual(b.Script, want) {
		t.Errorf("script\n%+v, want\n%+v", b.Script, want)
	}
	if b.Name != "s-x" || b.Backend != "tensorrt-rtx" || b.ONNX != "" || b.Engine != "" || b.BuilderSettings() != nil ||
		b.Budgets.Build != time.Hour || b.Budgets.Stall != 5*time.Minute || b.Budgets.Grace != defaultGrace || b.Sim != defaultSim() {
		t.Errorf("build %+v", b)
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0].Msg, "defaults: onnx, engine, workspace, opt-level, trtexec, sim: not for builds with run:") {
		t.Errorf("warnings %v", f.Warnings)
	}
}

// Without workdir:, a command starts in the matrix file's folder, named
// absolute however the file was named; a missing workdir is not checked
// where the inputs are not (plan).
func TestScriptWorkdir(t *testing.T) {
	dir := realDir(t, t.TempDir())
	t.Chdir(dir)
	body := "version: 1\nbuilds:\n  - {name: a, backend: tensorrt, run: [x]}\n  - {name: b, backend: tensorrt, run: [x], workdir: gone}\n"
	if err := os.WriteFile("m.yml", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("m.yml"); err == nil || !strings.Contains(err.Error(), `m.yml:4:53: workdir: folder "gone" not found`) {
		t.Errorf("missing workdir: %v", err)
	}
	f, err := LoadWithoutInputs("m.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Builds[0].Script.Workdir; got != dir {
		t.Errorf("workdir %q, want %q", got, dir)
	}
	if got := f.Builds[1].Script.Workdir; got != filepath.Join(dir, "gone") {
		t.Errorf("workdir %q", got)
	}
}

// The engines of a build with run: are outputs of the run: one that is
// an input (the matrix file), or the engine of another build, is refused,
// and, since a program may write a file in place, so is a hard link of an
// input.
func TestScriptEnginesAreOutputs(t *testing.T) {
	f, dir, err := scriptFile(t, `version: 1
builds:
  - name: s
    backend: tensorrt
    run: [python, build.py]
    engine: [trt-builds.yml, out/s.engine, linked.engine]
  - name: t
    backend: tensorrt
    onnx: model.onnx
    engine: out/t.engine
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "model.onnx"), filepath.Join(dir, "linked.engine")); err != nil {
		t.Fatal(err)
	}
	files := f.RunFiles(f.Builds)
	var outputs []string
	for _, rf := range files {
		if rf.Role == runfiles.Program {
			outputs = append(outputs, rf.Pos+" "+rf.Path)
		}
	}
	if want := []string{f.Path + ":6:14 " + f.Path, f.Path + ":6:30 " + filepath.Join(dir, "out/s.engine"), f.Path + ":6:44 " + filepath.Join(dir, "linked.engine")}; !reflect.DeepEqual(outputs, want) {
		t.Errorf("outputs %q, want %q", outputs, want)
	}
	err = runfiles.Check(files)
	var cs runfiles.Collisions
	if !errors.As(err, &cs) || len(cs) != 2 || !strings.Contains(cs[0].Msg, "is the matrix file") ||
		!strings.Contains(cs[1].Msg, "is a hard link of") || !strings.Contains(cs[1].Msg, "the model of build \"t\"") {
		t.Errorf("collisions: %v", err)
	}

	_, _, err = scriptFile(t, `version: 1
builds:
  - {name: s, backend: tensorrt, run: [x], engine: [out/t.engine]}
  - {name: t, backend: sim, engine: out/t.engine}
`)
	if err == nil || !strings.Contains(err.Error(), `trt-builds.yml:4:29: engine "`) || !strings.Contains(err.Error(), `t.engine" of build "t" is also written by build "s" (at `) {
		t.Errorf("two builds writing one engine: %v", err)
	}
}

// --backend sim stands a simulated build in for a build with run: (it
// runs nothing and keeps no engine); a real backend other than its own is
// refused, its own changes nothing.
func TestOnBackendScript(t *testing.T) {
	script := func() []Build {
		return []Build{{Name: "s", Backend: "tensorrt", Script: &Script{Argv: []string{"x"}, Engines: []string{"a.engine"}}}}
	}
	b := script()
	if err := OnBackend(b, "sim"); err != nil || b[0].Backend != "sim" || b[0].Script != nil || b[0].Engine != "" {
		t.Errorf("--backend sim: %v %+v", err, b[0])
	}
	b = script()
	if err := OnBackend(b, "tensorrt"); err != nil || b[0].Script == nil {
		t.Errorf("--backend of its own: %v %+v", err, b[0])
	}
	if err := OnBackend(script(), "tensorrt-rtx"); err == nil || !strings.Contains(err.Error(), `build "s" runs a command (run:) whose program imports tensorrt`) {
		t.Errorf("--backend tensorrt-rtx: %v", err)
	}
}

// plan --json shows what a build with run: runs, with the names of its
// env: but never their values; plan --trtexec gives its command as its
// line.
func TestPlanScript(t *testing.T) {
	f, dir, err := scriptFile(t, `version: 1
builds:
  - name: s
    backend: tensorrt
    run: python "build it.py" --token-file t
    env: {HF_TOKEN: hf_secret, MODE: fast}
    workdir: work
    engine: out/s.engine
`)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := PlanJSON(&out, f.Builds, func(Build) (string, string) { return "", "never cached" }, ""); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out.Bytes(), []byte("hf_secret")) || bytes.Contains(out.Bytes(), []byte("fast")) {
		t.Errorf("plan --json shows env values:\n%s", out.String())
	}
	var plan []struct {
		Script planScript `json:"script"`
		Engine string     `json:"engine"`
	}
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatal(err)
	}
	want := planScript{Run: []string{"python", "build it.py", "--token-file", "t"}, Workdir: filepath.Join(dir, "work"),
		Env: []string{"HF_TOKEN", "MODE"}, Engines: []string{filepath.Join(dir, "out/s.engine")}}
	if len(plan) != 1 || !reflect.DeepEqual(plan[0].Script, want) || plan[0].Engine != "" {
		t.Errorf("plan %+v, want %+v", plan, want)
	}
	out.Reset()
	PlanTrtexec(&out, f.Builds)
	if want := "# s\n# runs its own command (run:), which has no trtexec line, in " + filepath.Join(dir, "work") +
		", with env: HF_TOKEN, MODE\npython 'build it.py' --token-file t\n"; out.String() != want {
		t.Errorf("plan --trtexec:\n%s\nwant:\n%s", out.String(), want)
	}
}

// A problem inside a run: string is reported where it is written, on the
// line of a block scalar it is on, and inside a substituted matrix value
// at the ${{ that put it there.
func TestScriptCommandPositions(t *testing.T) {
	for _, c := range []struct {
		run, v string
		want   string // line:col
	}{
		{"run: python x.py | tee", "x", "4:22"},
		{"run: 'python x.py | tee'", "x", "4:23"},
		{"run: \"python x.py\n      --a | tee\"", "x", "5:11"},
		{"run: |\n      python x.py \\\n        --a | tee", "x", "6:13"},
		{"run: >\n      python x.py\n      --a | tee", "x", "6:11"},
		{"run: python x.py\n      --a | tee", "x", "5:11"},
		{"run: python x.py ${{ matrix.v }} | tee", `"it's"`, "4:22"},
		{"run: python x.py --a ${{ matrix.v }} | tee", "ok", "4:42"},
	} {
		_, _, err := scriptFile(t, "version: 1\nbuilds:\n  - name: a\n    "+c.run+"\n    backend: tensorrt\n    matrix: {v: ["+c.v+"]}\n")
		var errs Errors
		if !errors.As(err, &errs) || len(errs) != 1 {
			t.Errorf("%q: %v", c.run, err)
			continue
		}
		if got := errs[0].Pos.String(); !strings.HasSuffix(got, ":"+c.want) {
			t.Errorf("%q: at %s, want %s: %v", c.run, got, c.want, errs[0])
		}
	}
}

// docs/matrix.md's example of builds with run: is valid and plans to the
// commands it shows (cmd/trt-action's page tests run the binary on the
// other examples of the page).
func TestMatrixPageRunExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/matrix.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(doc), "\n## `run:` builds\n")
	_, block, found2 := strings.Cut(section, "```yaml\n")
	block, _, found3 := strings.Cut(block, "```")
	if !found || !found2 || !found3 {
		t.Fatal("docs/matrix.md has no yaml block under ## `run:` builds")
	}
	f, _, err := scriptFile(t, block)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range f.Builds {
		got = append(got, b.Name+": "+strings.Join(b.Script.Argv, " ")+" "+strings.Join(b.Script.Env, " "))
	}
	want := []string{
		"yolo11n: yolo export model=yolo11n.pt format=engine dynamic=true CUDA_MODULE_LOADING=LAZY",
		"yolo11s: yolo export model=yolo11s.pt format=engine dynamic=true CUDA_MODULE_LOADING=LAZY",
		"polygraphy: polygraphy convert models/model.onnx -o out/model.engine POLYGRAPHY_USE_TENSORRT_RTX=1",
	}
	if !reflect.DeepEqual(got, want) || len(f.Warnings) != 0 {
		t.Errorf("builds\n%s\nwant\n%s\nwarnings %v", strings.Join(got, "\n"), strings.Join(want, "\n"), f.Warnings)
	}
}

// A build with run: declares its inputs (patterns relative to its
// workdir) and outputs (paths as its engines are named); the files its
// patterns match now are inputs of the run, and its outputs are outputs.
func TestScriptInputsAndOutputs(t *testing.T) {
	f, dir, err := scriptFile(t, `version: 1
builds:
  - name: llm
    backend: tensorrt-rtx
    run: [python, build.py]
    workdir: work
    engine: [out/rank0.engine, out/rank1.engine]
    inputs: ["*.py", "ckpt/**", "!ckpt/*.tmp"]
    outputs: out/config.json
`)
	for _, p := range []string{"work/build.py", "work/ckpt/a/w.bin", "work/ckpt/x.tmp"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err == nil { // the patterns matched nothing when the file was loaded: now they do
		t.Fatal("inputs that match no file were taken")
	}
	if f, err = Load(f.Path); err != nil {
		t.Fatal(err)
	}
	s := f.Builds[0].Script
	if !s.Cached() || !reflect.DeepEqual(s.Inputs, []string{"*.py", "ckpt/**", "!ckpt/*.tmp"}) ||
		!reflect.DeepEqual(s.InputPos, []Pos{{f.Path, 8, 14}, {f.Path, 8, 22}, {f.Path, 8, 33}}) || s.InputsPos != (Pos{f.Path, 8, 5}) ||
		!reflect.DeepEqual(s.Outputs, []string{filepath.Join(dir, "out/config.json")}) || !reflect.DeepEqual(s.OutputPos, []Pos{{f.Path, 9, 5}}) {
		t.Errorf("script %+v", s)
	}
	if names, problems := s.InputFiles(); len(problems) > 0 || !reflect.DeepEqual(names, []string{"build.py", "ckpt/a/w.bin"}) {
		t.Errorf("InputFiles = %q, %v", names, problems)
	}
	roles := map[string]runfiles.Role{}
	for _, rf := range f.RunFiles(f.Builds) {
		roles[rf.Path] = rf.Role
	}
	if roles[filepath.Join(dir, "work/build.py")] != runfiles.Input || roles[filepath.Join(dir, "work/ckpt/a/w.bin")] != runfiles.Input ||
		roles[filepath.Join(dir, "out/config.json")] != runfiles.Program {
		t.Errorf("run files %v", roles)
	}
	if _, ok := roles[filepath.Join(dir, "work/ckpt/x.tmp")]; ok {
		t.Error("an excluded file is an input of the run")
	}
}
