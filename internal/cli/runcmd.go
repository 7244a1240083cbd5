package cli

import (
	"flag"
	"slices"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/outputs"
)

// trt-action run [flags] -- COMMAND [ARGS...]: one script build without a
// matrix file, with build's views, outputs and exit codes
// (docs/builder-scripts.md).

// runFlags are run's own flags; the rest are build's (buildFlags).
type runFlags struct {
	name    string
	backend string
	engines listFlag
	inputs  listFlag
	outputs listFlag
	env     listFlag
	workdir string
	budgets matrix.Budgets
	phases  listFlag
	warn    float64
}

func (c *Command) runFlagSet(f *buildFlags, r *runFlags) *flag.FlagSet {
	fs := c.newFlags("run", "[--build-budget D] [--stall-budget D] [--phase-budget PATTERN=D]... [--memory-budget SIZE] [--engine FILE]... [--input PATTERN]... [--output FILE]... [--env NAME=VALUE]... [--cache DIR] [flags] -- COMMAND [ARGS...]")
	fs.StringVar(&r.name, "name", "", "the build's `name` in reports (default: the command's base name; for python SCRIPT or -m MODULE, the script's or module's)")
	fs.StringVar(&r.backend, "backend", backend.TensorRT, "which TensorRT the program imports: "+backend.TensorRT+" or "+backend.TensorRTRTX+" ("+backend.Sim+": simulate, run nothing)")
	fs.Var(&r.engines, "engine", "an engine `file` the program writes; checked and fingerprinted after it (repeatable)")
	fs.Var(&r.inputs, "input", "a file or glob `pattern` (relative to --workdir) of what decides the engines: with it, the build is cached (repeatable)")
	fs.Var(&r.outputs, "output", "another `file` the program writes that goes with its engines, cached and delivered with them (repeatable)")
	fs.Var(&r.env, "env", "`NAME=VALUE` for the command's environment (repeatable)")
	fs.StringVar(&r.workdir, "workdir", "", "the `folder` the command starts in (default: the working folder)")
	fs.DurationVar(&r.budgets.Build, "build-budget", 0, "time budget for the whole command")
	fs.DurationVar(&r.budgets.Stall, "stall-budget", 0, "longest time without a callback inside a TensorRT build")
	fs.Var(&r.phases, "phase-budget", "`PATTERN=DURATION`: limit each matching phase of every TensorRT build (repeatable)")
	fs.Float64Var(&r.warn, "budget-warn", 0, "warn when a limit passes this `percent`")
	fs.DurationVar(&r.budgets.Grace, "grace", 0, "after a stop, how long before every process of the command is killed (default 30s)")
	fs.StringVar(&f.baseline, "baseline", "", "an earlier JSON `report`: the command's time and each TensorRT build's compared with it")
	fs.StringVar(&f.gpus, "gpus", "", "the GPU to run on (`index`; CUDA_VISIBLE_DEVICES)")
	f.cache.register(fs)
	f.registerOutputs(fs)
	f.memory.register(fs, false)
	return fs
}

func runRun(c *Command, args []string) error {
	var f buildFlags
	var r runFlags
	fs := c.runFlagSet(&f, &r)
	flags, command := splitCommand(args)
	if _, err := c.parseGiven(fs, flags, nil); err != nil {
		return err
	}
	if rest := fs.Args(); len(rest) > 0 {
		return usagef("run: %q is not a flag; put the command after --, like trt-action run -- %s", rest[0], strings.Join(rest, " "))
	}
	f.given = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	f.jobs, f.perGPU = 1, 1
	if err := f.checkDetail(); err != nil {
		return err
	}
	spec, err := r.spec(command)
	if err != nil {
		return err
	}
	out, err := c.newOutputs(outputs.Paths{Report: f.report, Summary: f.summary, JUnit: f.publish.junit, Events: f.events})
	if err != nil {
		return err
	}
	exe, exeErr := c.workerExecutable()
	file, err := matrix.CommandFile(spec)
	if err != nil {
		return err
	}
	builds := file.Builds
	if r.backend == backend.Sim {
		if err := matrix.OnBackend(builds, backend.Sim); err != nil {
			return usageError{err.Error()}
		}
	}
	f.file = file.Path
	return c.runLoaded(&f, file, builds, out, exe, exeErr)
}

// splitCommand splits run's arguments at the first "--": flags before it,
// the command after it, never parsed.
func splitCommand(args []string) (flags, command []string) {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i], args[i+1:]
	}
	return args, nil
}

// spec is the build the flags describe.
func (r *runFlags) spec(command []string) (matrix.CommandSpec, error) {
	name := r.backend
	if name == backend.Sim {
		name = backend.TensorRT // the build is checked as written, then simulated (--backend sim)
	}
	s := matrix.CommandSpec{Name: r.name, Backend: name, Argv: command, Env: r.env, Workdir: r.workdir,
		Engines: r.engines, Inputs: r.inputs, Outputs: r.outputs, Budgets: r.budgets}
	s.Budgets.WarnPercent = r.warn
	for _, p := range r.phases {
		pattern, limit, ok := strings.Cut(p, "=")
		d, err := time.ParseDuration(limit)
		if !ok || pattern == "" || err != nil {
			return s, usagef("--phase-budget %q: write PATTERN=DURATION, like --phase-budget 'Timing tactics=10m'", p)
		}
		s.Budgets.Phases = append(s.Budgets.Phases, matrix.PhaseBudget{Pattern: pattern, Limit: d})
	}
	return s, nil
}
