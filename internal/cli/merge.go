package cli

import (
	"fmt"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/shard"
)

func init() {
	register("merge", subcommand{summary: "join the reports of sharded jobs into one report, summary and JUnit file", run: runMerge})
}

// runMerge is the last job of a fan-out: it reads every shard's report and
// writes the joined report, summary, JUnit file and step outputs, then
// publishes the comment and check run for the whole matrix. Its exit code is
// the one a single job running every build would have had.
func runMerge(c *Command, args []string) (int, error) {
	var reportPath, summaryPath string
	var pub publishFlags
	fs := c.newFlags("merge", "[--report FILE] [--summary FILE] [--junit FILE] [--comment MODE] [--check-run] REPORT...")
	fs.StringVar(&reportPath, "report", "trt-report.json", "write the merged JSON report to `file`")
	fs.StringVar(&summaryPath, "summary", "", "write the Markdown summary to `file` (default: $GITHUB_STEP_SUMMARY when set)")
	pub.register(fs)
	if err := c.parse(fs, args, publishInputs); err != nil {
		return ExitInvalid, err
	}
	if fs.NArg() == 0 {
		return ExitInvalid, usagef("merge: name the shard reports to join (trt-action merge shard-*/trt-report.json)")
	}
	var reports []*report.Report
	for _, path := range fs.Args() {
		r, err := report.ReadJSON(path)
		if err != nil {
			return ExitInvalid, usageError{err.Error()}
		}
		reports = append(reports, r)
	}
	merged, err := shard.Merge(reports)
	if err != nil {
		return ExitInvalid, usageError{err.Error()}
	}
	out, err := c.newOutputs(buildFlags{report: reportPath, summary: summaryPath})
	if err != nil {
		return ExitInvalid, err
	}
	out.checkpoint(merged)
	if err := out.final(merged); err != nil {
		return ExitFailed, err
	}
	if err := writeJUnit(pub.junit, merged); err != nil {
		return ExitFailed, err
	}
	c.publish(pub, merged, out.summaryPath, nil)
	fmt.Fprintf(c.Streams.Err, "trt-action: merged %d reports, %d builds, into %s\n", len(reports), len(merged.Builds), reportPath)
	return exitFor(merged, "", failOnBudget, ""), nil
}
