package cli

import (
	"slices"

	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/shard"
)

// runSetup is what build needs beside the matrix: the baseline to compare
// with, and the GPUs to spread builds over.
type runSetup struct {
	baseline   *report.Report
	regression matrix.Regression
	gpus       *gpus.Pool
}

// prepareRun checks the flags that need more than parsing, all at once.
func (c *Command) prepareRun(f *buildFlags, file *matrix.File) (*runSetup, error) {
	if !slices.Contains(failOnChoices, f.failOn) {
		return nil, usagef("--fail-on %q: must be one of %v", f.failOn, failOnChoices)
	}
	run := &runSetup{regression: shard.DefaultRegression}
	if file.Regression != nil {
		run.regression = *file.Regression
	}
	if f.baseline != "" {
		base, err := report.ReadJSON(f.baseline)
		if err != nil {
			return nil, usagef("--baseline: %v", err)
		}
		run.baseline = base
	}
	if f.gpus != "" {
		devices, err := gpus.WithinVisible(f.gpus, c.Getenv("CUDA_VISIBLE_DEVICES"), gpus.NvidiaSMI)
		if err != nil {
			return nil, usagef("--gpus: %v", err)
		}
		if f.perGPU < 1 {
			return nil, usagef("--builds-per-gpu must be at least 1")
		}
		run.gpus = gpus.NewPool(devices, f.perGPU)
		if !c.flagGiven(f, "jobs") {
			f.jobs = len(devices) * f.perGPU
		}
	}
	if f.jobs < 1 {
		return nil, usagef("--jobs must be at least 1")
	}
	return run, nil
}

// regressionVerdict is the worst verdict of the baseline comparison, or ""
// without a baseline.
func (run *runSetup) regressionVerdict(r *report.Report) string {
	if run.baseline == nil {
		return ""
	}
	return shard.Worst(shard.Compare(r, run.baseline, run.regression))
}

// regressionSection is appended to the job summary when there is a baseline.
func (run *runSetup) regressionSection(r *report.Report) string {
	if run.baseline == nil {
		return ""
	}
	return "\n" + shard.DeltaTable(shard.Compare(r, run.baseline, run.regression), run.regression)
}

func (c *Command) flagGiven(f *buildFlags, name string) bool {
	return f.given[name]
}
