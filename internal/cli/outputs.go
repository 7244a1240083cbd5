package cli

import (
	"fmt"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/report"
)

// outputs writes what a run leaves behind: the JSON report and the summary
// after every build (so a cancelled run still has both), and the step
// outputs at the end.
type outputs struct {
	gha         *actions.Actions
	reportPath  string
	summaryPath string
	errs        []error                     // the first failure, reported once at the end
	extra       func(*report.Report) string // appended to the summary (the baseline comparison)
}

func (c *Command) newOutputs(f buildFlags) (*outputs, error) {
	o := &outputs{gha: c.actions(), reportPath: f.report, summaryPath: f.summary}
	if o.summaryPath == "" {
		o.summaryPath = o.gha.StepSummaryPath()
	}
	if o.reportPath == "" {
		return nil, usagef("--report: a file is required")
	}
	return o, nil
}

func (o *outputs) checkpoint(r *report.Report) {
	if err := report.WriteJSON(o.reportPath, r); err != nil && len(o.errs) == 0 {
		o.errs = append(o.errs, fmt.Errorf("writing the report: %w", err))
	}
	if o.summaryPath != "" {
		// The extra section counts against GitHub's 1 MiB (Summary keeps
		// to it): over it, the runner drops the whole summary.
		extra := ""
		if o.extra != nil {
			extra = o.extra(r)
		}
		summary := report.Summary(r, report.SummaryOptions{Comparison: extra})
		if err := report.WriteFileAtomic(o.summaryPath, []byte(summary)); err != nil && len(o.errs) == 0 {
			o.errs = append(o.errs, fmt.Errorf("writing the summary: %w", err))
		}
	}
}

// final writes the step outputs. A value that cannot be written safely is an
// error, never a partial write.
func (o *outputs) final(r *report.Report) error {
	if len(o.errs) > 0 {
		return o.errs[0]
	}
	if !o.gha.InActions() {
		return nil
	}
	values := [][2]string{
		{"report", o.reportPath}, {"summary", o.summaryPath},
		{"succeeded", fmt.Sprint(countOK(r))}, {"failed", fmt.Sprint(len(r.Builds) - countOK(r))},
		{"engines", engineMap(r)},
	}
	for _, kv := range values {
		if err := o.gha.SetOutput(kv[0], kv[1]); err != nil {
			return fmt.Errorf("output %s: %w", kv[0], err)
		}
	}
	return nil
}
