package cli

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/trt-action/trt-action/internal/baseline"
	"github.com/trt-action/trt-action/internal/build"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// runSetup is what build needs beside the matrix: the regression gate
// (with the baseline ETAs come from), the GPUs to spread builds over, and
// the engine cache.
type runSetup struct {
	gate   baseline.Gate
	gpus   *gpus.Pool
	cache  *build.EngineCache // nil: no engine cache
	shared *sharedStore       // the shared store behind it; nil: none
}

// prepareRun checks the flags that need more than parsing, and that no
// output would write over an input or another output (exe, the worker
// binary, among them), and reports every problem at once.
func (c *Command) prepareRun(f *buildFlags, file *matrix.File, builds []matrix.Build, out *outputs.Outputs, exe string) (*runSetup, error) {
	errs := append([]error{checkFailOn(f.failOn), f.publish.check()}, checkCounts(f)...)
	errs = append(errs, f.cache.check(file, builds, c.Getenv)...)
	errs = append(errs, runfiles.Check(runFiles(f, file, builds, out, exe)))
	base, err := readBaseline(f.baseline)
	errs = append(errs, err)
	run := &runSetup{gate: baseline.NewGate(base, file.Regression)}
	slots := 0 // builds the GPUs can take at once
	var devices []string
	if f.gpus != "" {
		devices, err = gpus.WithinVisible(f.gpus, c.Getenv("CUDA_VISIBLE_DEVICES"), gpus.NvidiaSMI)
		if err != nil {
			errs = append(errs, usageError{err.Error()}) // it names --gpus and the value
		}
		run.gpus = gpus.NewPool(devices, f.perGPU)
		slots = len(devices) * f.perGPU
		if !f.given["jobs"] {
			f.jobs = max(slots, 1)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if run.cache, run.shared, err = c.engineCache(&f.cache, file, builds, f.trtLib, devices); err != nil {
		return nil, err
	}
	if capped, why := build.CapJobs(f.jobs, slots, runtime.NumCPU()); capped != f.jobs {
		fmt.Fprintf(c.Streams.Err, "trt-action: --jobs %d: %s; running %d at once\n", f.jobs, why, capped)
		f.jobs = capped
	}
	return run, nil
}

// readBaseline reads the report --baseline names (build's, merge's and
// plan's), or none when path is "".
func readBaseline(path string) (*report.Report, error) {
	if path == "" {
		return nil, nil
	}
	r, err := report.ReadJSON(path)
	if err != nil {
		return nil, flagFileError("--baseline", err)
	}
	return r, nil
}

// checkCounts refuses numeric flags that are out of range or that would
// silently do nothing.
func checkCounts(f *buildFlags) []error {
	var errs []error
	if f.jobs < 1 {
		errs = append(errs, usagef("--jobs %d: must be at least 1 (builds at once)", f.jobs))
	}
	switch {
	case f.perGPU < 1:
		errs = append(errs, usagef("--builds-per-gpu %d: must be at least 1 (builds at once on one GPU)", f.perGPU))
	case f.perGPU != 1 && f.gpus == "":
		errs = append(errs, usagef("--builds-per-gpu %d: only applies with --gpus (all, or indexes like 0,1); without --gpus, --jobs alone sets how many builds run at once", f.perGPU))
	}
	if f.depth < 1 {
		errs = append(errs, usagef("--depth %d: must be at least 1 (phase starts and finishes are shown down to this depth; 1: top-level phases only)", f.depth))
	}
	if f.runBudget < 0 {
		errs = append(errs, usagef("--run-budget %s: must be positive (leave it out for no run budget)", f.runBudget))
	}
	return errs
}
