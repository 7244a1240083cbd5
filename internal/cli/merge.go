package cli

import (
	"errors"
	"fmt"

	"github.com/trt-action/trt-action/internal/baseline"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/shard"
	"github.com/trt-action/trt-action/internal/text"
)

// runMerge is the last job of a fan-out: it reads every shard's report and
// writes the joined report, summary, JUnit file and step outputs, then
// publishes the comment and check run for the whole matrix. Its exit code is
// the one a single job running every build would have had.
func runMerge(c *Command, args []string) error {
	var reportPath, summaryPath, matrixPath, baselinePath, failOn string
	var pub publishFlags
	fs := c.newFlags("merge", "[-f MATRIX] [--report FILE] [--summary FILE] [--junit FILE] [--baseline REPORT] [--fail-on WHAT] [--comment MODE] [--check-run] REPORT...")
	fs.StringVar(&matrixPath, "f", "", "the run's matrix `file`: every build in it must be in a report (a shard that uploaded nothing shows), and its regression thresholds apply")
	fs.StringVar(&reportPath, "report", "trt-report.json", "write the merged JSON report to `file`")
	fs.StringVar(&summaryPath, "summary", "", "write the Markdown summary to `file` (default: $GITHUB_STEP_SUMMARY when set)")
	fs.StringVar(&baselinePath, "baseline", "", "an earlier JSON `report` to compare build times with")
	fs.StringVar(&failOn, "fail-on", failOnBudget, "what fails the step: failure, budget (failures, blown budgets, regressions) or never")
	pub.register(fs)
	inputs := map[string]string{"f": "matrix", "baseline": "baseline", "fail-on": "fail-on"}
	for k, v := range publishInputs {
		inputs[k] = v
	}
	if err := c.parse(fs, args, inputs); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("merge: name the shard reports to join (trt-action merge shard-*/trt-report.json)")
	}
	if err := errors.Join(checkFailOn(failOn), pub.check()); err != nil {
		return err
	}
	var reports []*report.Report
	for _, path := range fs.Args() {
		r, err := report.ReadJSON(path)
		if err != nil {
			return invalid(err)
		}
		reports = append(reports, r)
	}
	merged, err := shard.Merge(reports)
	if err != nil {
		return invalid(err)
	}
	var thresholds *matrix.Regression
	var matrixBuilds []matrix.Build
	if matrixPath != "" {
		// The merge job, like the plan job, may run without the models.
		file, builds, err := loadBuilds(matrixPath, nil, "", withoutInputs)
		if err != nil {
			return err
		}
		thresholds = file.Regression
		shard.AddMissing(merged, builds)
		matrixBuilds = builds
	}
	base, err := readBaseline(baselinePath)
	if err != nil {
		return err
	}
	gate := baseline.NewGate(base, thresholds)
	out, err := c.newOutputs(outputs.Paths{Report: reportPath, Summary: summaryPath, JUnit: pub.junit})
	if err != nil {
		return err
	}
	if err := runfiles.Check(mergeFiles(fs.Args(), matrixPath, baselinePath, out)); err != nil {
		return err
	}
	gate.Mark(merged)
	shard.MarkUnfinished(merged)
	if err := out.Check("nothing was merged"); err != nil {
		return err
	}
	byShard := shard.CacheByShard(reports)
	out.Extra = func(r *report.Report) string { return gate.Section(r) + shard.CacheTable(byShard) }
	out.Checkpoint(merged)
	fmt.Fprintf(c.Streams.Err, "trt-action: merged %s, %s, into %s\n", text.Count(len(reports), "report"), text.Count(len(merged.Builds), "build"), reportPath)
	for _, u := range byShard {
		fmt.Fprintf(c.Streams.Err, "trt-action: %s\n", u.Line())
	}
	c.printUntrusted(c.Streams.Err, "■ "+report.Headline(merged)+"\n") // the outcome, as a build's last line
	return c.finishRun(merged, nil, runEnding{out: out, publish: pub, failOn: failOn, locate: matrix.Locator(matrixPath, matrixBuilds)})
}

// mergeFiles is every file merge reads and writes, for runfiles.Check.
func mergeFiles(shards []string, matrixPath, baselinePath string, out *outputs.Outputs) []runfiles.File {
	var files []runfiles.File
	for _, p := range shards {
		files = append(files, runfiles.File{Path: p, Role: runfiles.Input, Noun: "a shard report"})
	}
	files = append(files,
		runfiles.File{Path: matrixPath, Role: runfiles.Input, Noun: "the matrix file (-f)"},
		runfiles.File{Path: baselinePath, Role: runfiles.Input, Noun: "the baseline report (--baseline)"})
	return append(files, out.Files()...) // Check passes over a path not given ("")
}
