package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/text"
)

// outputs writes what a run leaves behind: the JSON report and the summary
// after every build (so a cancelled run still has both), and at the end the
// JUnit file and the step outputs. Each output is written whether or not
// another one failed; every failure is kept, and reported at the end.
type outputs struct {
	gha         *actions.Actions
	reportPath  string
	summaryPath string
	junitPath   string
	eventsPath  string // --events FILE; "" for none or stdout (-)
	summaryName string // how the user named the summary: --summary or $GITHUB_STEP_SUMMARY
	// streams are the outputs that are not regular files (a FIFO,
	// /dev/stdout): they take one document, written at the end.
	streams map[string]bool
	failed  []outputFailure             // the latest failure of each output, in order
	extra   func(*report.Report) string // appended to the summary (the baseline comparison)
}

// outputFailure is an output that could not be written, named as the user
// named it (a flag or a variable).
type outputFailure struct {
	output string
	err    error
}

func (c *Command) newOutputs(f buildFlags) (*outputs, error) {
	o := &outputs{gha: c.actions(), reportPath: f.report, summaryPath: f.summary, junitPath: f.publish.junit,
		summaryName: "--summary", streams: map[string]bool{}}
	if o.summaryPath == "" {
		o.summaryPath, o.summaryName = o.gha.StepSummaryPath(), "$GITHUB_STEP_SUMMARY"
	}
	if f.events != "-" {
		o.eventsPath = f.events
	}
	if o.reportPath == "" {
		return nil, usagef("--report: a file is required")
	}
	for _, p := range []string{o.reportPath, o.summaryPath} {
		o.streams[p] = p != "" && atomicfile.IsStream(p)
	}
	return o, nil
}

// check finds, before any work, every output that cannot be written,
// creating the folders of the report, summary and JUnit file. ending says
// what a failure means, e.g. "no build was started".
func (o *outputs) check(ending string) error {
	var fails []outputFailure
	add := func(output string, err error) {
		if err != nil {
			fails = append(fails, outputFailure{output, err})
		}
	}
	add("--report", atomicfile.Check(o.reportPath))
	if o.summaryPath != "" {
		add(o.summaryName, atomicfile.Check(o.summaryPath))
	}
	if o.junitPath != "" {
		add("--junit", atomicfile.Check(o.junitPath))
	}
	if o.eventsPath != "" {
		add("--events", atomicfile.Check(o.eventsPath))
	}
	if o.gha.InActions() {
		add("$GITHUB_OUTPUT", o.gha.CheckOutputFile())
	}
	if len(fails) == 0 {
		return nil
	}
	return outputError{fails: fails, ending: ending}
}

// files are the outputs, named as the user named them, for
// runfiles.Check.
func (o *outputs) files() []runfiles.File {
	named := [][2]string{{"--report", o.reportPath}, {o.summaryName, o.summaryPath}, {"--junit", o.junitPath}, {"--events", o.eventsPath}}
	if o.gha.InActions() {
		named = append(named, [2]string{"$GITHUB_OUTPUT", o.gha.OutputPath()})
	}
	var files []runfiles.File
	for _, n := range named {
		if n[1] != "" {
			files = append(files, runfiles.File{Path: n[1], Role: runfiles.Output, What: n[0]})
		}
	}
	return files
}

// record keeps the outcome of one write: a later success clears an
// earlier failure of the same output (the file now holds the latest).
func (o *outputs) record(output string, err error) {
	for i, f := range o.failed {
		if f.output == output {
			if err == nil {
				o.failed = append(o.failed[:i], o.failed[i+1:]...)
			} else {
				o.failed[i].err = err
			}
			return
		}
	}
	if err != nil {
		o.failed = append(o.failed, outputFailure{output, err})
	}
}

// checkpoint rewrites the report and summary files. Streams wait for the
// end: a reader of a FIFO or stdout expects one document, and a FIFO
// nobody reads yet would block the run.
func (o *outputs) checkpoint(r *report.Report) {
	if !o.streams[o.reportPath] {
		o.writeReport(r)
	}
	if o.summaryPath != "" && !o.streams[o.summaryPath] {
		o.writeSummary(r)
	}
}

func (o *outputs) writeReport(r *report.Report) {
	o.record("--report", report.WriteJSON(o.reportPath, r))
}

func (o *outputs) writeSummary(r *report.Report) {
	// The extra section counts against GitHub's 1 MiB (Summary keeps
	// to it): over it, the runner drops the whole summary.
	extra := ""
	if o.extra != nil {
		extra = o.extra(r)
	}
	summary := report.Summary(r, report.SummaryOptions{Comparison: extra})
	o.record(o.summaryName, atomicfile.Write(o.summaryPath, []byte(summary)))
}

// final writes what is written once (streams, the JUnit file, the step
// outputs) and returns every output that could not be written, or nil.
// A step output that cannot be written safely is an error, never a
// partial write.
func (o *outputs) final(r *report.Report) error {
	if o.streams[o.reportPath] {
		o.writeReport(r)
	}
	if o.summaryPath != "" && o.streams[o.summaryPath] {
		o.writeSummary(r)
	}
	if o.junitPath != "" {
		o.record("--junit", writeJUnit(o.junitPath, r))
	}
	if o.gha.InActions() {
		o.setStepOutputs(r)
	}
	if len(o.failed) == 0 {
		return nil
	}
	return outputError{fails: o.failed}
}

// setStepOutputs writes each step output on its own, so one that cannot
// be written costs no other. Outputs that failed alike (an unwritable
// $GITHUB_OUTPUT fails them all) are reported together.
func (o *outputs) setStepOutputs(r *report.Report) {
	values := [][2]string{
		{"report", o.reportPath}, {"summary", o.summaryPath},
		{"succeeded", fmt.Sprint(countOK(r))}, {"failed", fmt.Sprint(len(r.Builds) - countOK(r))},
		{"cached", fmt.Sprint(countCached(r))}, {"stored", fmt.Sprint(countStored(r))},
		{"engines", engineMap(r)},
	}
	var causes []string
	names := map[string][]string{}
	errs := map[string]error{}
	for _, kv := range values {
		err := o.gha.SetOutput(kv[0], kv[1])
		if err == nil {
			continue
		}
		cause := err.Error()
		if _, seen := names[cause]; !seen {
			causes, errs[cause] = append(causes, cause), err
		}
		names[cause] = append(names[cause], kv[0])
	}
	for _, cause := range causes {
		o.record(fmt.Sprintf("$GITHUB_OUTPUT (%s)", strings.Join(names[cause], ", ")), errs[cause])
	}
}

// notesPath is the summary file that notes may be appended to, or "": a
// stream was written once and closed, and opening it again could block.
func (o *outputs) notesPath() string {
	if o.streams[o.summaryPath] {
		return ""
	}
	return o.summaryPath
}

// outputError lists every output that could not be written: one line
// each, then a line that says what it means for the run.
type outputError struct {
	fails  []outputFailure
	ending string // what it meant, e.g. "no build was started"; "" at the end of a run
}

func (e outputError) Error() string {
	var b strings.Builder
	names := make([]string, len(e.fails))
	for i, f := range e.fails {
		names[i] = f.output
		fmt.Fprintf(&b, "trt-action: %s: %v\n", f.output, f.err)
	}
	fmt.Fprintf(&b, "trt-action: %s could not be written (%s)", text.Count(len(e.fails), "output"), strings.Join(names, ", "))
	if e.ending != "" {
		b.WriteString(": " + e.ending)
	}
	return b.String()
}

// runEnding is what build and merge need to end a run the same way.
type runEnding struct {
	out     *outputs
	publish publishFlags
	failOn  string
	locate  func(build string) (file string, line int) // a build's place in the matrix, for annotations
}

// finishRun ends a run whose report is final: the outputs written once,
// the comment and check run, then the exit code. cause is build.Run's: a
// run a signal stopped publishes nothing, since the runner's SIGTERM after
// SIGINT is at most 7.5 s away.
func (c *Command) finishRun(r *report.Report, cause error, e runEnding) int {
	outErr := e.out.final(r)
	if cause == nil {
		c.publish(e.publish, r, e.out.notesPath(), e.out.extra, e.locate)
	}
	return c.endRun(exitFor(r, cause, e.failOn), outErr)
}

// endRun is the last thing a run prints: every output that could not be
// written, and, as the last line, the exit code that follows from it.
// Output failures outrank the builds' results, since the report that
// would tell those is what is missing, but not a signal.
func (c *Command) endRun(code int, outErr error) int {
	var oe outputError
	if !errors.As(outErr, &oe) {
		return code
	}
	if code != ExitInterrupted && code != ExitTerminated {
		code = ExitOutput
	}
	c.printUntrusted(c.Streams.Err, fmt.Sprintf("%v: exit %d\n", oe, code))
	return code
}
