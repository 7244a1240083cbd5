package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/build"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// buildFlags are trt-action build's flags.
type buildFlags struct {
	file        string
	backend     string
	jobs        int
	only        listFlag
	report      string
	summary     string
	recordTrace string
	detail      string // --report-detail
	events      string
	trtLib      string
	depth       int
	noColor     bool
	runBudget   time.Duration
	baseline    string
	gpus        string
	perGPU      int
	failOn      string
	publish     publishFlags
	cache       cacheFlags
	memory      memoryFlags
	given       map[string]bool // flags set on the command line or by an input
}

// buildInputs maps flags to the Action inputs that can set them.
var buildInputs = map[string]string{
	"f": "matrix", "backend": "backend", "jobs": "jobs", "only": "only",
	"report": "report", "summary": "summary", "record-trace": "record-trace", "report-detail": "report-detail",
	"events": "events", "trt-lib": "trt-lib", "depth": "depth", "run-budget": "run-budget",
	"baseline": "baseline", "gpus": "gpus", "builds-per-gpu": "builds-per-gpu", "fail-on": "fail-on",
	"cache": "cache", "no-cache": "no-cache", "rebuild": "rebuild",
	"cache-remote": "cache-remote", "cache-remote-mode": "cache-remote-mode",
	"memory-budget": "memory-budget", "gpu-memory-budget": "gpu-memory-budget", "min-free-memory": "min-free-memory",
}

func init() {
	for flagName, input := range publishInputs {
		buildInputs[flagName] = input
	}
}

func (c *Command) buildFlagSet(f *buildFlags) *flag.FlagSet {
	fs := c.newFlags("build", "[-f FILE | FILE] [--backend B] [--jobs N] [--only NAME]... [--report FILE] [--summary FILE] [--record-trace DIR]")
	fs.StringVar(&f.file, "f", matrix.DefaultFile, "the matrix `file`")
	fs.StringVar(&f.backend, "backend", "", "run every build on this `backend` ("+strings.Join(backend.Names(), ", ")+")")
	fs.IntVar(&f.jobs, "jobs", 1, "builds to run at once")
	fs.Var(&f.only, "only", "run only builds with this `name` or glob (repeatable, or comma-separated)")
	fs.StringVar(&f.recordTrace, "record-trace", "", "record every build's callbacks as a trace into `dir`")
	fs.StringVar(&f.trtLib, "trt-lib", "", "the TensorRT or TensorRT-RTX library to load (`path`)")
	fs.DurationVar(&f.runBudget, "run-budget", 0, "time budget for the whole run (overrides the file's run-budget)")
	fs.StringVar(&f.baseline, "baseline", "", "an earlier JSON `report`: ETAs, and build times compared with the file's regression thresholds")
	fs.StringVar(&f.gpus, "gpus", "", "`all` or a list like 0,1: one GPU per worker (CUDA_VISIBLE_DEVICES)")
	fs.IntVar(&f.perGPU, "builds-per-gpu", 1, "builds at once on one GPU")
	f.registerOutputs(fs)
	f.cache.register(fs)
	f.memory.register(fs, true)
	return fs
}

// registerOutputs adds the flags build and run share: what a run leaves
// (report, summary, events, JUnit and the GitHub ones), the view, and
// what fails the step.
func (f *buildFlags) registerOutputs(fs *flag.FlagSet) {
	fs.StringVar(&f.report, "report", "trt-report.json", "write the JSON report to `file`")
	fs.StringVar(&f.summary, "summary", "", "write the Markdown summary to `file` (default: $GITHUB_STEP_SUMMARY when set)")
	fs.StringVar(&f.detail, "report-detail", "folded", "phases in the report: folded (one node per phase path, and the slowest instances) or full (also every instance)")
	fs.StringVar(&f.events, "events", "", "stream JSON Lines events to `file` (- for stdout)")
	fs.IntVar(&f.depth, "depth", 2, "show phase starts and finishes down to this depth")
	fs.BoolVar(&f.noColor, "no-color", false, "no colour in terminal output")
	fs.StringVar(&f.failOn, "fail-on", failOnBudget, "what fails the step: failure, budget (failures, blown budgets, regressions) or never")
	f.publish.register(fs)
}

// checkDetail refuses a --report-detail build and run do not know.
func (f *buildFlags) checkDetail() error {
	if f.detail != "folded" && f.detail != "full" {
		return usagef("--report-detail: unknown value %q; allowed: folded, full", f.detail)
	}
	return nil
}

func runBuild(c *Command, args []string) error {
	var f buildFlags
	fs := c.buildFlagSet(&f)
	cmdline, err := c.parseGiven(fs, args, buildInputs)
	if err != nil {
		return err
	}
	f.given = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	if err := matrixArg("build", fs, cmdline, &f.file); err != nil {
		return err
	}
	if err := f.checkDetail(); err != nil {
		return err
	}
	out, err := c.newOutputs(outputs.Paths{Report: f.report, Summary: f.summary, JUnit: f.publish.junit, Events: f.events})
	if err != nil {
		return err
	}
	// Looked up once: the files checked and the workers started name one
	// binary. Not found, no file is checked against it, and no build
	// starts (said after every other problem).
	exe, exeErr := c.workerExecutable()
	file, builds, err := loadBuilds(f.file, f.only, f.backend, withInputs)
	if err != nil {
		if file != nil { // invalid: what of it is valid is checked too, so both come at once
			err = errors.Join(err, runfiles.Check(runFiles(&f, file, builds, out, exe)))
		}
		return err
	}
	c.printMatrixWarnings(file)
	if n := simulatedStandIns(builds); n > 0 {
		fmt.Fprintf(c.Streams.Err, "trt-action: --backend %s: %d of %d builds name another backend in the matrix; their simulated engines are not kept, and the files at their engine paths stay as they are\n", f.backend, n, len(builds))
	}
	return c.runLoaded(&f, file, builds, out, exe, exeErr)
}

// runLoaded runs builds (of file) to the end of the run: build's and
// run's last steps once each has its builds.
func (c *Command) runLoaded(f *buildFlags, file *matrix.File, builds []matrix.Build, out *outputs.Outputs, exe string, exeErr error) error {
	run, err := c.prepareRun(f, file, builds, out, exe)
	if err != nil {
		return err
	}
	if exeErr != nil {
		return fmt.Errorf("cannot find my own executable to start workers: %w", exeErr)
	}
	if err := out.Check("no build was started"); err != nil {
		return err
	}
	hook, err := c.prepareHook(builds)
	if err != nil {
		return err
	}
	defer hook.remove()
	out.Extra = run.gate.Section
	views, heartbeat, err := c.views(*f, run.gate.Baseline)
	if err != nil {
		return err
	}
	runBudget := file.RunBudget
	if f.runBudget > 0 {
		runBudget = f.runBudget
	}
	f.memory.apply(builds)
	rep, cause := build.Run(builds, build.Options{
		Exe: exe, WorkerArgs: []string{workerCommand}, ReaperArgs: []string{reaperCommand}, HookPath: hook.path, NativeDir: hook.native, NativeMissing: hook.nativeMissing, LibPath: f.trtLib,
		Jobs: f.jobs, GPUs: run.gpus, RunBudget: runBudget, Heartbeat: heartbeat, PhaseDepth: f.depth,
		RecordDir: f.recordTrace, EveryPhase: f.detail == "full", Cache: run.cache, Matrix: f.file, Tool: "trt-action " + Version,
		OnEvent: views.Handle, Checkpoint: func(r *report.Report) { run.shared.decorate(r); out.Checkpoint(r) }, Conclude: run.gate.Mark,
		MinFreeMemory: f.memory.minFreeBytes(), NVMLLibrary: nvmlLibrary(),
	}, c.signals)
	if err := views.Close(); err != nil {
		c.printUntrusted(c.Streams.Err, fmt.Sprintf("trt-action: %v\n", err))
	}
	return c.finishRun(rep, cause, runEnding{out: out, publish: f.publish, failOn: f.failOn, locate: matrix.Locator(f.file, builds)})
}

// runFiles is every file the run reads and writes, for runfiles.Check:
// the matrix's (matrixFiles; exe is the worker binary), the outputs the
// flags name, the traces --record-trace writes and the baseline report.
func runFiles(f *buildFlags, file *matrix.File, builds []matrix.Build, out *outputs.Outputs, exe string) []runfiles.File {
	files := append(matrixFiles(file, builds, f.trtLib, exe, &f.cache), out.Files()...)
	if f.recordTrace != "" {
		for _, b := range builds {
			files = append(files, runfiles.File{Path: build.TraceFile(f.recordTrace, b.Name), Role: runfiles.Output,
				What: "--record-trace file", Noun: "the trace recording (--record-trace)", Build: b.Name})
		}
	}
	if f.baseline != "" {
		files = append(files, runfiles.File{Path: f.baseline, Role: runfiles.Input, Noun: "the baseline report (--baseline)"})
	}
	return files
}

// matrixFiles is every file the matrix names for builds, for
// runfiles.Check: the matrix file and what its builds read and write
// (File.RunFiles), what they load (trtLib or each backend's library, and
// exe, the worker binary) and the cache folder cache names.
func matrixFiles(file *matrix.File, builds []matrix.Build, trtLib, exe string, cache *cacheFlags) []runfiles.File {
	files := append(file.RunFiles(builds), build.LoadedFiles(builds, trtLib, exe)...)
	return append(files, cache.folder(file)...)
}

// newOutputs are the outputs a run writes (build's, or merge's).
func (c *Command) newOutputs(p outputs.Paths) (*outputs.Outputs, error) {
	if p.Report == "" {
		return nil, usagef("--report: a file is required")
	}
	return outputs.New(c.actions(), p), nil
}

// Whether loadBuilds checks that the models and traces exist.
const (
	withInputs    = true
	withoutInputs = false
)

// loadBuilds reads the matrix file and picks the builds to run. With
// inputs, a matrix with errors comes back too (beside its matrix.Errors)
// as far as it is valid, its builds picked as far as --only and --backend
// can pick them, for the check of the files it names; what they could not
// pick is said once the matrix is valid.
func loadBuilds(path string, only []string, backend string, inputs bool) (*matrix.File, []matrix.Build, error) {
	load := matrix.LoadPartial
	if !inputs {
		load = matrix.LoadWithoutInputs // never comes back with errors
	}
	file, err := load(path)
	if file == nil {
		return nil, nil, matrixError(err)
	}
	builds, pickErr := pickBuilds(file, only, backend)
	switch {
	case err != nil:
		return file, builds, err
	case pickErr != nil:
		return nil, nil, pickErr
	}
	return file, builds, nil
}

// pickBuilds picks the builds --only and --backend ask for, as far as
// they can: every build when --only names one the file does not have (its
// name may be what is wrong in the file).
func pickBuilds(file *matrix.File, only []string, backend string) ([]matrix.Build, error) {
	builds, err := file.Select(only)
	if err != nil {
		builds = file.Builds
	}
	if backend != "" {
		if berr := matrix.OnBackend(builds, backend); err == nil {
			err = berr
		}
	}
	if err != nil {
		return builds, usageError{err.Error()}
	}
	return builds, nil
}

// matrixError is a matrix file that could not be loaded, typed by the
// exit-code table (invalid): one that is not there, or is not YAML, is
// invalid input (exit 2), as one with errors (matrix.Errors) already is;
// one there that could not be read is any other error (exit 1).
func matrixError(err error) error {
	var problems matrix.Errors
	if errors.As(err, &problems) {
		return err
	}
	return invalid(fmt.Errorf("matrix file: %w", err))
}

// simulatedStandIns counts the builds --backend sim turned into simulated
// stand-ins for real builds, which keep no engine (a build that runs a
// command has no engine path of its own either, and is none).
func simulatedStandIns(builds []matrix.Build) int {
	n := 0
	for _, b := range builds {
		if b.Engine == "" && b.Script == nil {
			n++
		}
	}
	return n
}

// workerExecutable is the binary the workers run, or why it cannot be
// found (then no build starts, and build says so).
func (c *Command) workerExecutable() (string, error) {
	if c.Executable == nil {
		return "", errors.New("none was given")
	}
	return c.Executable()
}
