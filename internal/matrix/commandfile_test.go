package matrix

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/runfiles"
)

// trt-action run's one build: named after its command unless named, its
// env sorted, its workdir absolute, its engines as given (relative to the
// working folder, as a matrix file's are to where trt-action runs, so the
// report names them so), grace defaulted; the File has no matrix file, so
// the run's files are its engines alone.
func TestCommandFile(t *testing.T) {
	dir := realDir(t, t.TempDir())
	t.Chdir(dir)
	if err := os.Mkdir("work", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := CommandFile(CommandSpec{
		Backend: "tensorrt-rtx", Argv: []string{"/usr/bin/yolo", "export", "format=engine"},
		Env: []string{"MODE=a=b", "A=", "TRT_ACTION_ROUTE=python"}, Workdir: "work", Engines: []string{"./out//y.engine", filepath.Join(dir, "abs.engine")},
		Budgets: Budgets{Build: 2 * time.Hour, Phases: []PhaseBudget{{Pattern: "Timing*", Limit: time.Minute}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := f.Builds[0]
	want := &Script{Argv: []string{"/usr/bin/yolo", "export", "format=engine"}, Env: []string{"A=", "MODE=a=b", "TRT_ACTION_ROUTE=python"},
		Workdir: filepath.Join(dir, "work"), Engines: []string{"out/y.engine", filepath.Join(dir, "abs.engine")},
		EnginePos: []Pos{{File: "--engine"}, {File: "--engine"}}, RunPos: Pos{File: "--"}, Workspace: dir}
	if b.Name != "yolo" || b.Backend != "tensorrt-rtx" || !reflect.DeepEqual(b.Script, want) || f.Path != "" ||
		b.Budgets.Grace != defaultGrace || b.Budgets.Build != 2*time.Hour || b.Budgets.Phases[0].Pos.String() != "--phase-budget" {
		t.Errorf("build %+v, script %+v", b, b.Script)
	}
	files := f.RunFiles(f.Builds)
	if len(files) != 3 || files[1].Role != runfiles.Program || files[1].Pos != "--engine" || runfiles.Check(files) != nil {
		t.Errorf("run files %+v", files)
	}
	f, err = CommandFile(CommandSpec{Name: "n", Backend: "tensorrt", Argv: []string{"python"}})
	if err != nil || f.Builds[0].Script.Workdir != dir {
		t.Errorf("default workdir: %v %+v", err, f)
	}
}

// --input and --output declare what a build with run: declares in inputs:
// and outputs:, patterns relative to the command's folder (no workspace
// bounds flags), each checked at its flag.
func TestCommandFileInputsAndOutputs(t *testing.T) {
	dir := realDir(t, t.TempDir())
	t.Chdir(dir)
	if err := os.MkdirAll("work/ckpt", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("work/ckpt/w.bin", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := CommandFile(CommandSpec{Backend: "tensorrt", Argv: []string{"trtllm-build"}, Workdir: "work",
		Engines: []string{"out/rank0.engine"}, Inputs: []string{"ckpt"}, Outputs: []string{"out/config.json"}})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Builds[0].Script
	if !reflect.DeepEqual(s.Inputs, []string{"ckpt"}) || s.Roots != nil || !reflect.DeepEqual(s.Outputs, []string{"out/config.json"}) ||
		!reflect.DeepEqual(s.OutputPos, []Pos{{File: "--output"}}) || !s.Cached() {
		t.Errorf("script %+v", s)
	}
	_, err = CommandFile(CommandSpec{Backend: "tensorrt", Argv: []string{"trtllm-build"}, Workdir: "work",
		Engines: []string{"out/rank0.engine"}, Inputs: []string{"ckpt", "*.py"}, Outputs: []string{"out/rank0.engine"}})
	want := `--output: "out/rank0.engine" is given with --engine too; an output is a file other than the engines` + "\n" +
		`--input: "*.py" matches no file (patterns are relative to the command's folder "` + filepath.Join(dir, "work") + `")`
	if err == nil || err.Error() != want {
		t.Errorf("errors:\n%v\nwant:\n%s", err, want)
	}
	_, err = CommandFile(CommandSpec{Backend: "tensorrt", Argv: []string{"trtllm-build"}, Workdir: "work", Inputs: []string{"ckpt"}})
	if err == nil || err.Error() != "--input: the build is cached with the engines it declares, and none is given; name them with --engine" {
		t.Errorf("inputs without engines: %v", err)
	}
}

// Every problem of the flags at once, each at its flag.
func TestCommandFileErrors(t *testing.T) {
	dir := realDir(t, t.TempDir())
	t.Chdir(dir)
	symlink(t, "elsewhere", "link.engine")
	_, err := CommandFile(CommandSpec{
		Name: "-bad", Backend: "sim", Env: []string{"NOEQUALS", "1X=a", "TRT_ACTION_HOOK_DIR=x", "TRT_ACTION_ROUTE=Python", "A=1", "A=2"},
		Workdir: "gone", Engines: []string{"a.engine", "./a.engine", "link.engine", ""},
		Budgets: Budgets{Stall: -time.Second, Phases: []PhaseBudget{{Pattern: "a//b", Limit: time.Second}}, WarnPercent: 120},
	})
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want Errors, got %v", err)
	}
	want := []string{
		`--: no command: give it after --, like trt-action run -- python build.py`,
		`--name: "-bad" is not a valid build name; use up to 128 letters, digits and . _ - + = @ , starting with a letter or digit`,
		`--backend: "sim": give the TensorRT the program imports: tensorrt, tensorrt-rtx`,
		`--env: "NOEQUALS": expected NAME=value`,
		`--env: "1X" is not a variable name; use letters, digits and _, not starting with a digit`,
		`--env: TRT_ACTION_HOOK_DIR is set by trt-action, for the hook that observes the builds the command runs; leave it out`,
		`--env: TRT_ACTION_ROUTE: "Python": only python is allowed (every TensorRT build of the command on the Python route); leave TRT_ACTION_ROUTE out for the native route where it can be taken`,
		`--env: A is given twice; give it once`,
		`--workdir: folder "gone" not found (relative paths are relative to the working folder)`,
		`--engine: "./a.engine" is given twice`,
		`--engine: "link.engine" is a symbolic link; trt-action does not write through links, so remove it or name the file it points to`,
		`--engine: expected a path, got an empty string`,
		`--stall-budget: duration must be greater than 0, got -1s`,
		`--phase-budget: "a//b": empty phase name between slashes; use a phase name, a glob like "Timing*" or a path like "Building engine/Timing tactics"`,
		`--budget-warn: percentage must be greater than 0% and at most 100%, got 120%`,
	}
	if got := strings.Split(errs.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A command's name that is no build name is made one, never refused.
	for argv, want := range map[string]string{"./my tool": "my_tool", "-dash.py": "dash.py"} {
		f, err := CommandFile(CommandSpec{Backend: "tensorrt", Argv: []string{"python", "--", argv}})
		if err != nil {
			t.Errorf("python -- %q: %v", argv, err)
		} else if f.Builds[0].Name != want {
			t.Errorf("python -- %q is named %q, want %q", argv, f.Builds[0].Name, want)
		}
	}
}
