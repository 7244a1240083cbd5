package matrix

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/runfiles"
)

// CommandSpec is one build with run:, as trt-action run's flags give it,
// without a matrix file: trt-action run [flags] -- CMD [ARGS...].
type CommandSpec struct {
	Name    string   // "" = the base name of the command's first word
	Backend string   // the TensorRT the program imports: tensorrt or tensorrt-rtx
	Argv    []string // the command, as given after --: never split, never run through a shell
	Env     []string // NAME=value each, in the order given
	Workdir string   // where the command starts; "" = the working folder
	Engines []string // the files the program writes, relative to the working folder
	Inputs  []string // patterns of what decides the engines, relative to Workdir (inputs:)
	Outputs []string // other files the program writes with its engines, as Engines are named (outputs:)
	Budgets Budgets  // Grace 0 = the default
}

// CommandFlags name, in CommandFile's errors, where each field of a
// CommandSpec came from: trt-action run's flags.
var CommandFlags = struct {
	Name, Backend, Command, Env, Workdir, Engine, Input, Output, Build, Stall, Phase, Warn, Grace string
}{
	Name: "--name", Backend: "--backend", Command: "--", Env: "--env", Workdir: "--workdir", Engine: "--engine",
	Input: "--input", Output: "--output",
	Build: "--build-budget", Stall: "--stall-budget", Phase: "--phase-budget", Warn: "--budget-warn", Grace: "--grace",
}

// commandPos is where a build from the command line was given.
var commandPos = Pos{File: "trt-action run"}

// CommandFile is a File of one build with run: made from spec, checked as
// a matrix file's build is (its name, backend, command, env, workdir and
// engines: each a file trt-action may remove, named once), all problems
// at once, as Errors at the flag that gave each (CommandFlags). Its Path
// is "": there is no matrix file (File.RunFiles leaves it out). Its
// workdir is absolute; its engines are as given (cleaned), relative to
// the working folder as a matrix file's are to where trt-action runs, so
// the report names them as the user did. Engines are not held to a
// workspace, as no paths given as flags are (a matrix file may come from
// a pull request; flags come from whoever runs trt-action).
func CommandFile(spec CommandSpec) (*File, error) {
	var errs collector
	at := func(flag string) Pos { return Pos{File: flag} }
	s := &Script{Argv: spec.Argv, RunPos: at(CommandFlags.Command)}
	b := Build{Name: spec.Name, Backend: spec.Backend, Script: s, Pos: commandPos, EnginePos: commandPos, Budgets: spec.Budgets, Sim: defaultSim()}

	switch {
	case len(spec.Argv) == 0:
		errs.add(s.RunPos, "no command: give it after --, like trt-action run -- python build.py")
	case spec.Argv[0] == "":
		errs.add(s.RunPos, "the command's name (its first word) is empty")
	case slices.ContainsFunc(spec.Argv, func(w string) bool { return strings.ContainsRune(w, 0) }):
		errs.add(s.RunPos, "an argument holds a NUL character, which no argument can hold")
	}
	if b.Name == "" && len(spec.Argv) > 0 && spec.Argv[0] != "" {
		b.Name = commandName(spec.Argv)
	} else if msg := nameProblem(b.Name); msg != "" {
		errs.add(at(CommandFlags.Name), "%s", msg)
		b.Name = ""
	}
	if !slices.Contains(scriptBackends(), b.Backend) {
		errs.add(at(CommandFlags.Backend), "%q: give the TensorRT the program imports: %s", b.Backend, choices(scriptBackends()))
	}
	s.Env = commandEnv(spec.Env, &errs)
	s.Workdir = runfiles.Abs(cmp.Or(spec.Workdir, "."))
	if msg := folderProblem(cmp.Or(spec.Workdir, "."), "the working folder"); msg != "" {
		errs.add(at(CommandFlags.Workdir), "%s", msg)
	}
	given := map[string]string{} // the engines' and outputs' absolute paths: the flag that gave each
	s.Engines, s.EnginePos = commandOutputs(spec.Engines, CommandFlags.Engine, given, &errs)
	s.Outputs, s.OutputPos = commandOutputs(spec.Outputs, CommandFlags.Output, given, &errs)
	s.Workspace = findWorkspace(".").root
	for _, p := range spec.Inputs {
		s.Inputs, s.InputPos = append(s.Inputs, p), append(s.InputPos, at(CommandFlags.Input))
		s.InputsPos = at(CommandFlags.Input)
	}
	commandCaching(s, &errs)
	commandBudgets(&b.Budgets, &errs)
	if err := errs.result(); err != nil {
		return nil, err
	}
	return &File{Version: 1, Builds: []Build{b}}, nil
}

// commandOutputs reads --engine or --output flags (flag): paths as given
// (cleaned), each a file trt-action may remove, none given twice among
// these and the others given (given: absolute path -> its flag, added to).
func commandOutputs(paths []string, flag string, given map[string]string, errs *collector) ([]string, []Pos) {
	var out []string
	var pos []Pos
	for _, p := range paths {
		abs := runfiles.Abs(p)
		switch by, twice := given[abs]; {
		case strings.TrimSpace(p) == "":
			errs.add(Pos{File: flag}, "expected a path, got an empty string")
		case twice && by == flag:
			errs.add(Pos{File: flag}, "%s is given twice", quoted(p))
		case twice:
			errs.add(Pos{File: flag}, "%s is given with %s too; an output is a file other than the engines", quoted(p), by)
		case outputProblem(p, abs) != "":
			errs.add(Pos{File: flag}, "%s", outputProblem(p, abs))
		default:
			given[abs] = flag
			out, pos = append(out, filepath.Clean(p)), append(pos, Pos{File: flag})
		}
	}
	return out, pos
}

// commandCaching checks --input and --output as checkCaching checks
// inputs: and outputs: (no workspace bounds flags: Roots stays nil).
func commandCaching(s *Script, errs *collector) {
	switch {
	case len(s.Inputs) > 0 && len(s.Engines) == 0:
		errs.add(Pos{File: CommandFlags.Input}, "the build is cached with the engines it declares, and none is given; name them with %s", CommandFlags.Engine)
	case len(s.Outputs) > 0 && len(s.Engines) == 0:
		errs.add(Pos{File: CommandFlags.Output}, "the files that go with the engines, and none is given; name them with %s", CommandFlags.Engine)
	}
	if len(s.Inputs) == 0 || folderProblem(s.Workdir, "") != "" {
		return
	}
	files, problems := s.InputFiles()
	for _, p := range problems {
		errs.add(s.InputPos[p.Pattern], "%s %s (patterns are relative to the command's folder %s)", quoted(s.Inputs[p.Pattern]), p.Msg, quoted(s.Workdir))
	}
	if len(problems) == 0 && len(files) == 0 {
		errs.add(s.InputsPos, "every file the patterns match is excluded by a ! pattern; the key would hold no input")
	}
}

// commandEnv reads --env NAME=value flags, as env: is read: sorted by
// name, each name once.
func commandEnv(given []string, errs *collector) []string {
	at := Pos{File: CommandFlags.Env}
	var out []string
	for _, kv := range given {
		name, value, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			errs.add(at, "%q: expected NAME=value", kv)
		case envNameProblem(name) != "":
			errs.add(at, "%s", envNameProblem(name))
		case strings.ContainsRune(value, 0):
			errs.add(at, "%s: %s", name, nulInValue)
		case envValueProblem(name, value) != "":
			errs.add(at, "%s: %s", name, envValueProblem(name, value))
		case slices.ContainsFunc(out, func(o string) bool { return envName(o) == name }):
			errs.add(at, "%s is given twice; give it once", name)
		default:
			out = append(out, kv)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(envName(a), envName(b)) })
	return out
}

// commandBudgets checks budgets from flags as budgets: are checked (no
// limit below zero, phase patterns that can match, warn a percentage up
// to 100), and gives grace its default.
func commandBudgets(b *Budgets, errs *collector) {
	for _, l := range []struct {
		flag  string
		limit time.Duration
	}{{CommandFlags.Build, b.Build}, {CommandFlags.Stall, b.Stall}, {CommandFlags.Grace, b.Grace}} {
		if l.limit < 0 {
			errs.add(Pos{File: l.flag}, "duration must be greater than 0, got %s", l.limit)
		}
	}
	b.Phases = slices.Clone(b.Phases) // each named at its flag, not in the caller's slice
	for i, p := range b.Phases {
		b.Phases[i].Pos = Pos{File: CommandFlags.Phase}
		if err := checkPhasePattern(p.Pattern); err != nil {
			errs.add(b.Phases[i].Pos, "%q: %v; use a phase name, a glob like \"Timing*\" or a path like \"Building engine/Timing tactics\"", p.Pattern, err)
		} else if p.Limit <= 0 {
			errs.add(b.Phases[i].Pos, "%q: duration must be greater than 0, got %s", p.Pattern, p.Limit)
		}
	}
	if b.WarnPercent < 0 || b.WarnPercent > 100 {
		errs.add(Pos{File: CommandFlags.Warn}, "percentage must be greater than 0%% and at most 100%%, got %g%%", b.WarnPercent)
	}
	b.Grace = cmp.Or(b.Grace, defaultGrace)
}

// commandName is the build name a command gives when --name does not: its
// first word's base name, but for a Python interpreter the script it runs
// ("python tools/export.py" is export.py) or the module ("python -m
// polygraphy" is polygraphy): every builder script would be "python".
// Made a build name (safeName), as a file's name need not be one.
func commandName(argv []string) string {
	name := filepath.Base(argv[0])
	if IsPython(argv[0]) {
		switch line := ParsePython(argv[1:]); {
		case line.Module != "":
			name = line.Module
		case line.Script != "" && line.Script != "-":
			name = filepath.Base(line.Script)
		}
	}
	return safeName(name)
}

// safeName makes name a build name: each run of characters a build name
// may not hold (anything but ASCII letters, digits and . _ - + = @ ,)
// becomes one _, what comes before the first letter or digit is dropped,
// and it is cut at 128 characters; "command" if nothing is left. "my
// build ü.py" is my_build_.py, "-dash.py" dash.py.
func safeName(name string) string {
	var b strings.Builder
	run := false // in a run of characters replaced
	for _, r := range name {
		switch {
		case isAlnum(r) || strings.ContainsRune(nameSigns, r):
			b.WriteRune(r)
			run = false
		case !run:
			b.WriteByte('_')
			run = true
		}
	}
	safe := strings.TrimLeftFunc(b.String(), func(r rune) bool { return !isAlnum(r) })
	if len(safe) > maxName {
		safe = safe[:maxName]
	}
	if safe == "" {
		return "command"
	}
	return safe
}

// What buildName allows (TestSafeNamesAreBuildNames holds them together):
// its signs besides ASCII letters and digits, and its length.
const (
	nameSigns = "._+=@,-"
	maxName   = 128
)

func isAlnum(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}
